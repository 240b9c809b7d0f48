"""A reply to everyone from a Dovecot account whose login name is an address: that address is
the account's own, and the reply leaves it out like the one the account sends as."""

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
from servers.dovecot import DovecotServer
from servers.smtp import SmtpServer
from sync.helpers import RemoteMailbox

from .helpers import AGENT, SMTP_PASSWORD, SMTP_USER, deliver_and_read


@pytest.mark.dovecot
def test_a_reply_to_everyone_leaves_out_the_imap_login_address(
    dovecot: DovecotServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suffix = uuid.uuid4().hex[:8]
    owner = dovecot.add_user(f"owner-{suffix}@example.test", f"pw-{suffix}")
    sends_as = f"owner.name-{suffix}@example.test"
    subject = f"Room booking {suffix}"
    register_all([subject, owner.username, sends_as, "olga@example.net", "carol@example.net"])

    original = EmailMessage()
    original["From"] = "Olga <olga@example.net>"
    original["To"] = f"{owner.username.upper()}, carol@example.net"
    original["Subject"] = subject
    original["Message-ID"] = f"<room-{suffix}@example.net>"
    original.set_content("Which room do we take?\n")
    mailbox = RemoteMailbox(owner)
    try:
        mailbox.append(bytes(original), folder="INBOX")
    finally:
        mailbox.close()

    smtp = SmtpServer({SMTP_USER: SMTP_PASSWORD}).start()
    try:
        monkeypatch.setenv("MF_OWNER_IMAP", owner.password)
        monkeypatch.setenv("MAILFATHOM_TEST_SMTP_SECRET", SMTP_PASSWORD)
        config_path = tmp_path / "mailfathom.toml"
        config_path.write_text(f"""
[Store]
DataDir = "{tmp_path / "data"}"

[[Accounts]]
Id = "owner"
Kind = "imap"

[Accounts.Imap]
Host = "127.0.0.1"
Port = {dovecot.port}
Username = "{owner.username}"
Tls = "none"
Secret = {{ Env = "MF_OWNER_IMAP" }}

[[Accounts.Folders]]
Remote = "INBOX"
Role = "Inbox"

[Accounts.Delivery]
Enabled = true
Address = "{sends_as}"

[Accounts.Delivery.Smtp]
Host = "127.0.0.1"
Port = {smtp.port}
Tls = "starttls"
Username = "{SMTP_USER}"
Secret = {{ Env = "MAILFATHOM_TEST_SMTP_SECRET" }}
""")
        config = load_config(config_path)
        with Services.open(config) as services:
            account = config.account("owner")
            assert account is not None
            services.account_synchronizer().run_once(account)
            page = services.reading().timeline.read(
                AGENT, TimelineRequest(selection=SelectionInput(accounts=["owner"]))
            )
            (received,) = page.emails
            record = services.sending().replies.reply(
                AGENT,
                ReplyRequest(
                    stored_email_id=str(received.stored_email_id),
                    everyone=True,
                    plain_text_body="The small one.",
                    idempotency_key="room-reply",
                ),
            )
            kept = ["olga@example.net", "carol@example.net"]
            assert [r.address for r in record.recipients] == kept
            rcpt, message = deliver_and_read(services, smtp)
            assert rcpt == kept
            assert message["Cc"] == "carol@example.net"
    finally:
        smtp.close()
