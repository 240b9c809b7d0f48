"""The deployment's own bounds on sending, at the use cases: read-only deployments, the
allow half of the recipient policy, unvouched addresses (never judged when derived), and each
ceiling named by its refusal. What needs no stored mail runs on the in-memory store; the
answer to a stored email runs on the real one."""

from __future__ import annotations

import uuid
from email.message import EmailMessage
from pathlib import Path

import pytest

from fakes.deployment import FakeDeployment
from log_audit import register_all
from mailfathom.app.contacts.ports import NewContact
from mailfathom.app.reading.list_emails import TimelineRequest
from mailfathom.app.sending.reply_to_email import ReplyRequest
from mailfathom.app.sending.send_email import SendRequest
from mailfathom.app.shared.mailbox_selection import SelectionInput
from mailfathom.domain.codes import Code
from mailfathom.domain.contacts import ContactOrigin, ContactWriter, contact_record
from mailfathom.domain.errors import Refusal
from mailfathom.domain.outgoing import Stage

from .helpers import AGENT, OTHER_AGENT, fake_deployment
from .helpers import open_deployment as _open

ADDRESSES = ["stranger@example.net", "ok@partner.example", "x@sub.partner.example"]


def _request(to: str, key: str) -> SendRequest:
    return SendRequest(
        account="work", to=[to], subject="Policy", plain_text_body="x", idempotency_key=key
    )


def _refusal(d: FakeDeployment, to: str, key: str = "k", caller: object = AGENT) -> int:
    with pytest.raises(Refusal) as refused:
        d.send().send(caller, _request(to, key))  # type: ignore[arg-type]
    return refused.value.code


@pytest.fixture
def register() -> None:
    register_all([*ADDRESSES, "Policy"])


def test_a_read_only_deployment_sends_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, register: None
) -> None:
    d = fake_deployment(tmp_path, monkeypatch, deployment="[Deployment]\nReadOnly = true")
    assert _refusal(d, "stranger@example.net") == Code.SENDING_NOT_ENABLED
    assert d.memory.outbox.listing(10) == []


def test_only_what_an_allowed_entry_covers_is_admitted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, register: None
) -> None:
    policy = '[MailDelivery.RecipientPolicy]\nAllow = ["partner.example", "me@example.org"]'
    d = fake_deployment(tmp_path, monkeypatch, mail_delivery="", deployment=policy)
    assert _refusal(d, "stranger@example.net") == Code.RECIPIENT_NOT_ADMITTED
    sending = d.send()
    assert sending.send(AGENT, _request("ok@partner.example", "a")).stage is Stage.QUEUED
    assert sending.send(AGENT, _request("x@sub.partner.example", "b")).stage is Stage.QUEUED


def test_unvouched_addresses_are_refused_but_derived_recipients_are_not_judged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, register: None
) -> None:
    for d in _open(tmp_path, None, monkeypatch, mail_delivery='UnvouchedRecipients = "Refuse"'):
        with pytest.raises(Refusal) as unvouched:
            d.services.sending().send.send(AGENT, _request("stranger@example.net", "k"))
        assert unvouched.value.code == Code.RECIPIENT_NOT_VOUCHED
        # A stranger's mail can be answered: the answered email vouches for its sender.
        incoming = EmailMessage()
        incoming["From"] = "stranger@example.net"
        incoming["To"] = "me@example.org"
        incoming["Subject"] = "Policy"
        incoming["Message-ID"] = "<policy-1@example.net>"
        incoming.set_content("Hello.\n")
        d.services.connectors.local.folder("work", "INBOX").deliver(bytes(incoming))
        account = d.services.config.account("work")
        assert account is not None
        d.services.account_synchronizer().run_once(account)
        page = d.services.reading().timeline.read(
            AGENT, TimelineRequest(selection=SelectionInput(folders=["INBOX"]))
        )
        reply = d.services.sending().replies.reply(
            AGENT,
            ReplyRequest(
                stored_email_id=str(page.emails[0].stored_email_id),
                everyone=False,
                plain_text_body="Hello back.",
                idempotency_key="reply",
            ),
        )
        assert [r.address for r in reply.recipients] == ["stranger@example.net"]
        # A copy the caller writes in is judged.
        with pytest.raises(Refusal) as refused:
            d.services.sending().replies.reply(
                AGENT,
                ReplyRequest(
                    stored_email_id=str(page.emails[0].stored_email_id),
                    everyone=False,
                    plain_text_body="Hello back.",
                    idempotency_key="reply-2",
                    cc=["ok@partner.example"],
                ),
            )
        assert refused.value.code == Code.RECIPIENT_NOT_VOUCHED


@pytest.mark.parametrize(
    ("ceilings", "name"),
    [
        ("Account = { PerHour = 2 }", "the account's hourly ceiling"),
        ("Installation = { PerDay = 2 }", "the installation's daily ceiling"),
        ("Client = { PerHour = 2 }", "this client's hourly ceiling"),
    ],
)
def test_each_ceiling_is_named_when_it_is_reached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, register: None, ceilings: str, name: str
) -> None:
    section = f"[MailDelivery.SendCeilings]\n{ceilings}"
    d = fake_deployment(tmp_path, monkeypatch, deployment=section)
    sending = d.send()
    sending.send(AGENT, _request("stranger@example.net", "1"))
    sending.send(AGENT, _request("stranger@example.net", "2"))
    with pytest.raises(Refusal) as refused:
        sending.send(AGENT, _request("stranger@example.net", "3"))
    assert refused.value.code == Code.SEND_CEILING_REACHED
    assert name in refused.value.message
    # A repeated call is answered, not counted; another caller has room unless the
    # ceiling is the account's or the installation's.
    assert sending.send(AGENT, _request("stranger@example.net", "1")).stage is Stage.QUEUED
    other = "this client" in name
    if other:
        assert sending.send(OTHER_AGENT, _request("stranger@example.net", "4")).stage is (
            Stage.QUEUED
        )
    else:
        assert _refusal(d, "stranger@example.net", "4", OTHER_AGENT) == 57002
    # Once the oldest send is an hour (or a day) old, there is room again.
    d.clock.advance(86_400 + 1)
    assert sending.send(AGENT, _request("stranger@example.net", "5")).stage is Stage.QUEUED


def test_a_key_another_caller_used_on_the_account_is_refused_not_answered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, register: None
) -> None:
    d = fake_deployment(tmp_path, monkeypatch)
    sending = d.send()
    first = sending.send(AGENT, _request("stranger@example.net", "shared-key"))
    assert _refusal(d, "stranger@example.net", "shared-key", OTHER_AGENT) == 51013
    assert sending.send(AGENT, _request("stranger@example.net", "shared-key")) == first


def test_every_address_an_account_receives_as_is_vouched_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, register: None
) -> None:
    """The aliases an account lists and the IMAP login name, when it is an address, are
    this deployment's own addresses like the one it sends as."""
    register_all(["me.alias@example.org", "owner@mail.example"])
    colleague = """
[[Accounts]]
Id = "owner"
Kind = "imap"

[Accounts.Imap]
Host = "127.0.0.1"
Port = 1
Username = "owner@mail.example"
Tls = "none"
Secret = { Env = "MAILFATHOM_TEST_SMTP_SECRET" }
"""
    d = fake_deployment(
        tmp_path,
        monkeypatch,
        mail_delivery='UnvouchedRecipients = "Refuse"',
        extra_accounts=colleague,
        addresses=("me@example.org", "me.alias@example.org"),
    )
    sending = d.send()
    for key, address in enumerate(["me.alias@example.org", "Owner@Mail.example"]):
        assert sending.send(AGENT, _request(address, str(key))).stage is Stage.QUEUED
    assert _refusal(d, "stranger@example.net") == Code.RECIPIENT_NOT_VOUCHED


def _book_holds(d: FakeDeployment) -> None:
    """One asserted person (written down here by the operator) and one collected from mail."""
    book = d.memory.contacts
    for address, origin, writer in (
        ("asserted@partner.example", ContactOrigin.ASSERTED, ContactWriter.OPERATOR),
        ("collected@partner.example", ContactOrigin.COLLECTED, ContactWriter.COLLECTION),
    ):
        record = contact_record("Somebody", [address], address, None)
        new = NewContact(uuid.uuid4(), record, origin, d.clock(), writer=writer)
        assert book.create(new).contact is not None


@pytest.mark.parametrize(
    ("which", "vouched"),
    [
        (None, {"asserted@partner.example", "collected@partner.example"}),
        ("Any", {"asserted@partner.example", "collected@partner.example"}),
        ("Asserted", {"asserted@partner.example"}),
        ("None", set()),
    ],
)
def test_the_contact_book_vouches_for_the_addresses_it_holds(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    register: None,
    which: str | None,
    vouched: set[str],
) -> None:
    register_all(["asserted@partner.example", "collected@partner.example", "Somebody"])
    section = 'UnvouchedRecipients = "Refuse"'
    if which is not None:
        section += f'\nVouchingContacts = "{which}"'
    d = fake_deployment(tmp_path, monkeypatch, mail_delivery=section)
    _book_holds(d)
    sending = d.send()
    for key, address in enumerate(
        ["asserted@partner.example", "Collected@Partner.example", "stranger@example.net"]
    ):
        if address.lower() in vouched:
            assert sending.send(AGENT, _request(address, str(key))).stage is Stage.QUEUED
        else:
            assert _refusal(d, address, str(key)) == Code.RECIPIENT_NOT_VOUCHED
