"""The book a synchronization collected from real mail survives a vCard round trip: exported,
erased record by record, imported, every person comes back under the same identity, name,
addresses, preferred address, note, origin and times (to the second)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from log_audit import register_headers
from mailfathom.adapters.local.maildir import LocalConnector
from mailfathom.bootstrap import Services
from mailfathom.domain.config import (
    AccountConfig,
    AccountKind,
    DeploymentConfig,
    FolderMapping,
    StoreConfig,
)
from mailfathom.domain.contacts import ContactOrigin
from mailfathom.domain.folders import FolderRole

from .vcard_round_trip import OPERATOR, assert_round_trip, whole_book

# Synchronizing the corpus starts the preparing worker processes.
pytestmark = [pytest.mark.corpus, pytest.mark.process]

# (folder, role, corpus directory, messages taken from it in name order)
FOLDERS = (
    ("INBOX", FolderRole.INBOX, "spamassassin-easy-ham-1", 400),
    ("Junk", FolderRole.JUNK, "spamassassin-spam-1", 100),
    ("Sent", FolderRole.SENT, "linux-mips-2005", 200),
)
OWN = "owner@collected.example"


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> StoreConfig:
    url = request.getfixturevalue("migrated_postgres_url") if request.param != "sqlite" else None
    return StoreConfig(data_dir=tmp_path / "data", database_url=url)


@pytest.fixture
def collected(corpora: Path, store: StoreConfig) -> Iterator[Services]:
    """A local account holding corpus mail in three folders, synchronized once."""
    account = AccountConfig(
        account_id="notes",
        display_name="Notes",
        kind=AccountKind.LOCAL,
        folders=tuple(FolderMapping(name, name, role) for name, role, _, _ in FOLDERS),
        addresses=(OWN,),
    )
    connector = LocalConnector(store.data_dir)
    for folder, _, corpus, count in FOLDERS:
        files = sorted(p for p in (corpora / "messages" / corpus).iterdir() if p.is_file())
        maildir = connector.folder(account.account_id, folder)
        for path in files[:count]:
            octets = path.read_bytes()
            register_headers(octets)
            maildir.deliver(octets)
    with Services.open(DeploymentConfig(store=store, accounts=(account,))) as services:
        services.account_synchronizer().run_once(account)
        yield services


def test_the_corpus_collected_book_comes_back_from_its_vcard_export(
    collected: Services,
) -> None:
    book = whole_book(collected)
    origins = Counter(c.origin for c in book)
    # Hundreds of people collected from the mail, and the account itself as its peers'
    # asserted record.
    assert origins[ContactOrigin.COLLECTED] > 200
    assert origins[ContactOrigin.ASSERTED] == 1
    # An owner's amendment of a promoted record is part of the round trip too.
    promoted = next(c for c in book if c.origin is ContactOrigin.COLLECTED and c.display_name)
    contacts = collected.contacts()
    assert contacts.promotion.promote(OPERATOR, str(promoted.contact_id)).value == "written"
    amended = contacts.amendment.update(
        OPERATOR,
        str(promoted.contact_id),
        promoted.display_name + ", amended",
        list(promoted.addresses),
        promoted.preferred_address,
        "Written down after the mail was read; with a comma, a semicolon\nand a new line.",
    )
    assert amended.contact is not None

    exported = assert_round_trip(collected)
    assert exported.count(b"BEGIN:VCARD") == len(book)
    assert exported.count(b"X-MAILFATHOM-ORIGIN:collected") == len(book) - 2
