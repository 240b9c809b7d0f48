"""Every path that leaves a record asserted leaves one the book's rules allow: a name, 1 to 32
addresses, a note within its bound. A collected record without a name is not promoted (the
refusal names what is missing), and a local account with more addresses than a record holds
is a peer record holding as many as one may. On SQLite and PostgreSQL, through the use cases
a tool and `mfctl` call."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest

from log_audit import register_all
from mailfathom.adapters.sql.contacts import SqlContactBook
from mailfathom.app.contacts.ports import NewContact
from mailfathom.bootstrap import Services
from mailfathom.domain.codes import Code
from mailfathom.domain.config import (
    AccountConfig,
    AccountKind,
    DeploymentConfig,
    FolderMapping,
    StoreConfig,
)
from mailfathom.domain.contacts import (
    MAX_ADDRESSES,
    Contact,
    ContactOrigin,
    contact_record,
)
from mailfathom.domain.errors import Refusal
from mailfathom.domain.folders import FolderRole

from .vcard_round_trip import OPERATOR, assert_round_trip, whole_book

NAMELESS = "nameless.secret@example.test"


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> StoreConfig:
    url = request.getfixturevalue("migrated_postgres_url") if request.param != "sqlite" else None
    return StoreConfig(data_dir=tmp_path / "data", database_url=url)


def _assert_rules_hold(contact: Contact) -> None:
    """The record passes the rules an asserted record is written under (51011 otherwise)."""
    contact_record(
        contact.display_name, list(contact.addresses), contact.preferred_address, contact.note
    )


def test_a_collected_record_without_a_name_is_refused_promotion(store: StoreConfig) -> None:
    register_all([NAMELESS])
    with Services.open(DeploymentConfig(store=store, accounts=())) as services:
        record = contact_record("", [NAMELESS], NAMELESS, None, unnamed_allowed=True)
        new = NewContact(uuid.uuid4(), record, ContactOrigin.COLLECTED, datetime.now(UTC))
        assert SqlContactBook(services.engine).create(new).contact is not None
        promotion = services.contacts().promotion
        with pytest.raises(Refusal) as refused:
            promotion.promote(OPERATOR, str(new.contact_id))
        assert refused.value.code == Code.CONTACT_RULE_BROKEN
        assert "name (displayName)" in refused.value.message
        assert NAMELESS not in refused.value.message
        (held,) = whole_book(services)
        assert (held.origin, held.display_name) == (ContactOrigin.COLLECTED, "")
        # The record still goes out and comes back as it is.
        assert_round_trip(services)


def test_a_local_account_with_more_addresses_than_a_record_holds_is_a_lawful_peer(
    store: StoreConfig,
) -> None:
    addresses = tuple(f"box{n:02}@peer.example" for n in range(MAX_ADDRESSES + 8))
    account = AccountConfig(
        account_id="wide",
        display_name="Wide Peer",
        kind=AccountKind.LOCAL,
        folders=(FolderMapping("INBOX", "INBOX", FolderRole.INBOX),),
        addresses=addresses,
    )
    with Services.open(DeploymentConfig(store=store, accounts=(account,))) as services:
        (peer,) = whole_book(services)
        assert peer.origin is ContactOrigin.ASSERTED
        assert peer.addresses == addresses[:MAX_ADDRESSES]
        _assert_rules_hold(peer)
        assert_round_trip(services)


def test_a_local_account_whose_name_renders_partly_as_nothing_is_a_lawful_peer(
    store: StoreConfig,
) -> None:
    """A record's name holds no character that renders as nothing, so a peer whose
    configured name holds one is named by its account identifier instead."""
    account = AccountConfig(
        account_id="hidden-name",
        display_name="Front\u200bDesk",
        kind=AccountKind.LOCAL,
        folders=(FolderMapping("INBOX", "INBOX", FolderRole.INBOX),),
        addresses=("desk@peer.example",),
    )
    with Services.open(DeploymentConfig(store=store, accounts=(account,))) as services:
        (peer,) = whole_book(services)
        assert (peer.origin, peer.display_name) == (ContactOrigin.ASSERTED, "hidden-name")
        _assert_rules_hold(peer)
        assert_round_trip(services)
