"""Every word of the console in Czech and Slovak: the pages rendered with content in each
language, and nothing a person reads left in English that is not the same in every language
(names, codes, dates, addresses)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from starlette.testclient import TestClient

import log_audit
from mailfathom.adapters.sql.mutations import SqlMutationStore
from mailfathom.adapters.sql.outbox import SqlOutbox
from mailfathom.app.confirmation.wording import Language
from mailfathom.app.flags import explanations as change_explanations
from mailfathom.app.flags.set_mail_flags import FlagChangeRequest
from mailfathom.app.sending import explanations as send_explanations
from mailfathom.app.sending.ports import AttemptResult, NewOutgoing
from mailfathom.bootstrap import Services
from mailfathom.domain.access import ALL_PERMISSIONS, Caller
from mailfathom.domain.codes import DeliveryCode
from mailfathom.domain.mutations import (
    MutationFailure,
    MutationKind,
    MutationRecord,
    MutationState,
)
from mailfathom.domain.outgoing import AddressField, OutgoingKind, Recipient, Stage
from mailfathom.entrypoints.console.pages import build_console_app
from mailfathom.entrypoints.console.record_wording import WORDINGS as RECORD_WORDINGS
from mailfathom.entrypoints.console.serving import console_use_cases
from sync.helpers import stored_rows

from .conftest import HOSTILE_NAME, ORIGIN, PASSWORD, Clock, Console, console_config
from .english_left import english_left

AGENT = Caller(ALL_PERMISSIONS, "agent")
ADDRESSES = ("ann@example.net", "bob@example.net", "eve@example.net")
# The data the pages show as it is, in every language.
DATA = {"home", HOSTILE_NAME, "INBOX", "agent", *ADDRESSES}


@pytest.fixture
def owned(tmp_path: Path) -> Iterator[Console]:
    log_audit.register(PASSWORD)
    clock = Clock()
    with Services.open(console_config(tmp_path), clock=clock) as services:
        services.console_access().set_password(PASSWORD)
        uses = console_use_cases(services)
        with TestClient(build_console_app(uses, "127.0.0.1"), base_url=ORIGIN) as client:
            console = Console(client, services, clock)
            assert console.sign_in().status_code == 303
            yield console


def _every_ended_send(console: Console) -> None:
    """One send refused under each delivery failure code, the kinds taken in turn, and one
    still held, so the outbox shows every kind, every code and a cancel button."""
    outbox = SqlOutbox(console.services.engine)
    now = console.clock()
    kinds = list(OutgoingKind)
    recipients = tuple(
        Recipient(field, address) for field, address in zip(AddressField, ADDRESSES, strict=True)
    )
    for position, code in enumerate([*DeliveryCode, None]):
        key = uuid.uuid4().hex
        after = now + timedelta(hours=2) if code is None else None
        outbox.record(
            NewOutgoing(
                outgoing_id=uuid.uuid4(),
                account_id="home",
                idempotency_key=key,
                caller="agent",
                kind=kinds[position % len(kinds)],
                queued_at=now,
                not_before=after or now,
                message_id=f"<{key}@example.org>",
                envelope_from="me@example.org",
                mime=b"Subject: x\r\n\r\nbody\r\n",
                recipients=recipients,
                send_after=after,
            ),
            [],
        )
    for claimed, code in zip(outbox.claim("w", now, 60, 100), DeliveryCode, strict=True):
        outbox.finish(claimed.seq, "w", AttemptResult(Stage.FAILED, (), int(code)), now)


def _every_dead_letter(console: Console) -> None:
    """A change of each kind the agents ask for most, dead-lettered under every failure code."""
    services = console.services
    services.deliver_sample_mail("home", 3)
    services.account_synchronizer().run_once(services.config.accounts[0])
    records: list[MutationRecord] = []
    for row in stored_rows(services, "home"):
        email = str(row.stored_email_id)
        for request in (
            FlagChangeRequest(email, seen=True),
            FlagChangeRequest(email, flagged=False),
            FlagChangeRequest(email, keyword_change="add", keywords=["$label1"]),
        ):
            records.extend(services.flags().record(AGENT, request).records)
    store = SqlMutationStore(services.engine)
    now = console.clock()
    store.begin([r.record_id for r in records], now)
    for record, code in zip(records, MutationFailure, strict=False):
        store.settle([record.record_id], MutationState.DEAD_LETTERED, int(code), now)


def _left(console: Console, path: str, language: str) -> set[str]:
    english = console.client.get(f"{path}?lang=en")
    other = console.client.get(f"{path}?lang={language}")
    assert (english.status_code, other.status_code) == (200, 200)
    return english_left(english.text, other.text, DATA)


@pytest.mark.parametrize("language", ["cs", "sk"])
def test_the_outbox_names_kinds_and_failures_in_the_page_language(
    owned: Console, language: str
) -> None:
    _every_ended_send(owned)
    assert _left(owned, "/outbox", language) == set()


@pytest.mark.parametrize("language", ["cs", "sk"])
def test_mailbox_changes_name_kinds_and_reasons_in_the_page_language(
    owned: Console, language: str
) -> None:
    _every_dead_letter(owned)
    assert _left(owned, "/mutations", language) == set()


def test_every_kind_field_and_failure_has_its_words_in_every_language() -> None:
    english = RECORD_WORDINGS[Language.EN]
    assert english.send_failures == send_explanations.FAILURE_EXPLANATIONS
    assert english.change_failures == change_explanations.FAILURE_EXPLANATIONS
    for language, words in RECORD_WORDINGS.items():
        assert set(words.send_kinds) == set(OutgoingKind)
        assert set(words.change_kinds) == set(MutationKind)
        assert set(words.address_fields) == set(AddressField)
        assert set(words.send_failures) == set(DeliveryCode)
        assert set(words.change_failures) == set(MutationFailure)
        assert words.send_failure(99999) == words.change_failure(99) == words.undescribed
        if language is not Language.EN:
            for ours, theirs in (
                (words.send_failures, english.send_failures),
                (words.change_failures, english.change_failures),
                (words.change_kinds, english.change_kinds),
                (words.send_kinds, english.send_kinds),
            ):
                assert not set(ours.values()) & set(theirs.values())
