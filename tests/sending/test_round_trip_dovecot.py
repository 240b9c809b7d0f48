"""A round trip through real mailboxes: a reply sent from one Dovecot account reaches another
through the test SMTP server (which hands it to Dovecot), is synchronized, and joins the
conversation of the message it answers."""

from __future__ import annotations

import uuid
from email.message import EmailMessage
from pathlib import Path

import pytest

from log_audit import register_all
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.app.reading.list_emails import TimelineRequest
from mailfathom.app.sending.reply_to_email import ReplyRequest
from mailfathom.app.shared.mailbox_selection import SelectionInput
from mailfathom.bootstrap import Services
from mailfathom.domain.outgoing import Stage
from servers.dovecot import DovecotServer
from servers.smtp import SmtpServer
from sync.helpers import RemoteMailbox

from .helpers import AGENT, SMTP_PASSWORD, SMTP_USER


def _account(account_id: str, user: str, port: int, secret_env: str, delivery: str) -> str:
    return f"""
[[Accounts]]
Id = "{account_id}"
Kind = "imap"
Addresses = ["{user}@example.test"]

[Accounts.Imap]
Host = "127.0.0.1"
Port = {port}
Username = "{user}"
Tls = "none"
Secret = {{ Env = "{secret_env}" }}

[[Accounts.Folders]]
Remote = "INBOX"
Role = "Inbox"

[[Accounts.Folders]]
Remote = "Sent"
Role = "Sent"
{delivery}
"""


@pytest.mark.dovecot
def test_a_reply_between_two_dovecot_accounts_lands_in_the_original_conversation(
    dovecot: DovecotServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suffix = uuid.uuid4().hex[:8]
    alice = dovecot.add_user(f"alice-{suffix}", f"pw-a-{suffix}")
    bob = dovecot.add_user(f"bob-{suffix}", f"pw-b-{suffix}")
    for user in (alice, bob):
        dovecot.create_folder(user.username, "Sent")
    subject = f"Planning the move {suffix}"
    register_all([subject, alice.username, bob.username, "Is Tuesday fine for the move?"])

    original = EmailMessage()
    original["From"] = f"Alice <{alice.username}@example.test>"
    original["To"] = f"{bob.username}@example.test"
    original["Subject"] = subject
    original["Date"] = "Mon, 29 Jun 2026 10:00:00 +0000"
    original["Message-ID"] = f"<move-{suffix}@example.test>"
    original.set_content("Is Tuesday fine for the move?\n")
    for user, folder in ((alice, "Sent"), (bob, "INBOX")):
        mailbox = RemoteMailbox(user)
        try:
            mailbox.append(bytes(original), folder=folder)
        finally:
            mailbox.close()

    deliver = [dovecot.doveadm_path, "-c", str(dovecot.config_path), "save", "-u", "{user}"]
    smtp = SmtpServer({SMTP_USER: SMTP_PASSWORD}, deliver_command=deliver).start()
    try:
        monkeypatch.setenv("MF_RT_ALICE", alice.password)
        monkeypatch.setenv("MF_RT_BOB", bob.password)
        monkeypatch.setenv("MAILFATHOM_TEST_SMTP_SECRET", SMTP_PASSWORD)
        bob_delivery = f"""
[Accounts.Delivery]
Enabled = true
Address = "{bob.username}@example.test"

[Accounts.Delivery.Smtp]
Host = "127.0.0.1"
Port = {smtp.port}
Tls = "starttls"
Username = "{SMTP_USER}"
Secret = {{ Env = "MAILFATHOM_TEST_SMTP_SECRET" }}
"""
        config_path = tmp_path / "mailfathom.toml"
        config_path.write_text(
            f'[Store]\nDataDir = "{tmp_path / "data"}"\n'
            + _account("alice", alice.username, dovecot.port, "MF_RT_ALICE", "")
            + _account("bob", bob.username, dovecot.port, "MF_RT_BOB", bob_delivery)
        )
        config = load_config(config_path)
        with Services.open(config) as services:
            synchronizer = services.account_synchronizer()
            for account in config.accounts:
                synchronizer.run_once(account)
            reading = services.reading()

            def emails(account: str, folder: str) -> list[object]:
                page = reading.timeline.read(
                    AGENT,
                    TimelineRequest(selection=SelectionInput(accounts=[account], folders=[folder])),
                )
                return list(page.emails)

            (received,) = emails("bob", "INBOX")
            record = services.sending().replies.reply(
                AGENT,
                ReplyRequest(
                    stored_email_id=str(received.stored_email_id),  # type: ignore[attr-defined]
                    everyone=False,
                    plain_text_body="Tuesday works for me.",
                    idempotency_key="move-reply",
                ),
            )
            report = services.delivery_pass(tls_context=smtp.client_context).run_once()
            assert report.sent == 1
            assert services.outbox().find(record.outgoing_id).stage is Stage.SENT  # type: ignore[union-attr]
            assert dovecot.mailbox_status(alice.username)["messages"] == 1

            alice_account = config.account("alice")
            assert alice_account is not None
            synchronizer.run_once(alice_account)
            (reply,) = emails("alice", "INBOX")
            (sent,) = emails("alice", "Sent")
            assert reply.subject == f"Re: {subject}"  # type: ignore[attr-defined]
            assert reply.thread_id == sent.thread_id  # type: ignore[attr-defined]
            assert reply.thread_id is not None  # type: ignore[attr-defined]

            # Bob keeps his copy: appended to his Sent folder, in his own conversation.
            assert dovecot.mailbox_status(bob.username, "Sent")["messages"] == 1
            bob_account = config.account("bob")
            assert bob_account is not None
            synchronizer.run_once(bob_account)
            (copy,) = emails("bob", "Sent")
            assert copy.subject == f"Re: {subject}"  # type: ignore[attr-defined]
            assert copy.thread_id == received.thread_id  # type: ignore[attr-defined]
    finally:
        smtp.close()
