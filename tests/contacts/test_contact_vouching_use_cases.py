"""Under `UnvouchedRecipients = "Refuse"`, at the use cases over the in-memory store: what a
caller writes with the contact tools vouches for nobody (a record it created, an address it
added to the operator's record, a collected record it promoted) unless the operator lets it
(`CallerWrittenContactsVouch`), and what the operator writes does. The same rules driven over
HTTP against `mailfathom serve` are test_contact_vouching_http's."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from fakes.deployment import FakeDeployment
from log_audit import register_all
from mailfathom.app.contacts.ports import WriteState
from mailfathom.app.sending.send_email import SendRequest
from mailfathom.domain.codes import Code
from mailfathom.domain.contact_collection import SeenPerson
from mailfathom.domain.contacts import ContactWriter
from mailfathom.domain.errors import Refusal
from mailfathom.domain.outgoing import Stage
from sending.helpers import AGENT, fake_deployment

NAME = "Vera Vouchless"
STRANGER = "stranger@example.net"
FRIEND = "friend@partner.example"
ADDED = "added@partner.example"
REFUSE = 'UnvouchedRecipients = "Refuse"'


@pytest.fixture(autouse=True)
def _register() -> None:
    register_all([NAME, STRANGER, FRIEND, ADDED, "Hello"])


def _deployment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *lines: str) -> FakeDeployment:
    return fake_deployment(tmp_path, monkeypatch, mail_delivery="\n".join([REFUSE, *lines]))


def _send(d: FakeDeployment, to: str) -> Stage:
    request = SendRequest(
        account="work",
        to=[to],
        subject="Hello",
        plain_text_body="Hello there.",
        idempotency_key=uuid.uuid4().hex,
    )
    return d.send().send(AGENT, request).stage


def _unvouched(d: FakeDeployment, to: str) -> None:
    held = d.memory.outbox.listing(1000)
    with pytest.raises(Refusal) as refused:
        _send(d, to)
    assert refused.value.code == Code.RECIPIENT_NOT_VOUCHED
    assert d.memory.outbox.listing(1000) == held


def _create(
    d: FakeDeployment, *addresses: str, writer: ContactWriter = ContactWriter.CALLER
) -> str:
    written = d.create_contact(writer).create(AGENT, NAME, list(addresses), addresses[0])
    assert written.state is WriteState.WRITTEN
    assert written.contact is not None
    return str(written.contact.contact_id)


def _update(d: FakeDeployment, contact_id: str, *addresses: str) -> None:
    written = d.update_contact().update(AGENT, contact_id, NAME, list(addresses), addresses[-1])
    assert written.state is WriteState.WRITTEN


@pytest.mark.parametrize("setting", [None, "CallerWrittenContactsVouch = false"])
def test_a_contact_the_caller_created_vouches_for_nobody(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setting: str | None
) -> None:
    d = _deployment(tmp_path, monkeypatch, *([setting] if setting else []))
    _unvouched(d, STRANGER)
    _create(d, STRANGER)
    _unvouched(d, STRANGER)
    assert d.memory.outbox.listing(10) == []


def test_the_operator_may_let_what_callers_write_vouch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = _deployment(tmp_path, monkeypatch, "CallerWrittenContactsVouch = true")
    _unvouched(d, STRANGER)
    _create(d, STRANGER)
    assert _send(d, STRANGER) is Stage.QUEUED


def test_what_the_operator_wrote_vouches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    d = _deployment(tmp_path, monkeypatch)
    _create(d, FRIEND, writer=ContactWriter.OPERATOR)
    assert _send(d, FRIEND) is Stage.QUEUED


def test_an_address_the_caller_added_to_the_operators_record_stays_unvouched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = _deployment(tmp_path, monkeypatch)
    contact_id = _create(d, FRIEND, writer=ContactWriter.OPERATOR)
    _update(d, contact_id, FRIEND, ADDED)
    _unvouched(d, ADDED)
    assert _send(d, FRIEND) is Stage.QUEUED
    # Taken out and put back by the caller, the operator's address is the caller's now.
    _update(d, contact_id, ADDED)
    _update(d, contact_id, FRIEND, ADDED)
    _unvouched(d, FRIEND)
    _unvouched(d, ADDED)


def test_a_promotion_by_the_caller_vouches_no_more_than_the_collected_record_did(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = _deployment(tmp_path, monkeypatch, 'VouchingContacts = "Asserted"')
    assert d.memory.contacts.collect([SeenPerson(STRANGER, NAME)], d.clock()) == 1
    held = d.memory.contacts.find_by_address(STRANGER)
    assert held is not None
    _unvouched(d, STRANGER)
    assert d.promote_contact().promote(AGENT, str(held.contact_id)) is WriteState.WRITTEN
    _unvouched(d, STRANGER)
    operator = d.promote_contact(ContactWriter.OPERATOR)
    assert operator.promote(AGENT, str(held.contact_id)) is WriteState.WRITTEN
    assert _send(d, STRANGER) is Stage.QUEUED
