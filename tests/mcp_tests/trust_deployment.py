"""A deployment whose mail carries stored verdicts and readings, from the fake trust ports:
what the reading tools publish of them, in process and over HTTP."""

from __future__ import annotations

from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path

from fakes.trust import FakeAssessor, FakeVerifier
from log_audit import register
from mailfathom.bootstrap import Services
from mcp_tests.in_process import caller_entries

SENT = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)

# subject: (From, what the fake verifier is told, body)
MAIL = {
    "Trusted sender signed": ("boss@partner.example", "authenticated", "See you at nine.\n"),
    "Trusted sender forged": ("boss@partner.example", "failed", "Wire the money now.\n"),
    "Trusted domain signed": ("anyone@trusted.example", "authenticated", "Minutes attached.\n"),
    "Own account signed": ("owner@example.net", "authenticated", "A note to self.\n"),
    "Stranger signed": (
        "stranger@elsewhere.example",
        "authenticated",
        "This generated text reads smoothly.\n",
    ),
}
BEFORE = "Stored before verification"


def raw_mail(subject: str, sender: str, verdict: str, body: str) -> bytes:
    message = EmailMessage()
    message["X-Test-Verdict"] = verdict
    message["From"] = sender
    message["To"] = "owner@example.net"
    message["Subject"] = subject
    message["Date"] = format_datetime(SENT)
    message["Message-ID"] = f"<{abs(hash(subject))}@example.org>"
    message.set_content(body)
    register(subject, body, sender)
    return bytes(message)


def trust_config(root: Path, *, trusted: bool = True) -> str:
    section = (
        '[SenderTrust]\nTrustedSenders = ["Boss@Partner.example"]\n'
        'TrustedDomains = ["trusted.example"]\n'
        if trusted
        else ""
    )
    return f"""
[Store]
DataDir = "{root / "data"}"

[[Accounts]]
Id = "work"
DisplayName = "Work Mail"
Kind = "local"
Addresses = ["owner@example.net"]

[[Accounts.Folders]]
Remote = "INBOX"
Role = "Inbox"

{section}
[McpEndpoint]
Enabled = true
Listen = "127.0.0.1:8625"

{caller_entries({"full": None})}
"""


def fill_trusted_mail(services: Services) -> None:
    """One message stored before any port was wired, then the rest with both fakes."""
    inbox = services.connectors.local.folder("work", "INBOX")
    inbox.deliver(
        raw_mail(BEFORE, "stranger@elsewhere.example", "authenticated", "Old mail.\n"),
        "",
        received_at=SENT,
    )
    services.sender_verifier = None
    services.authorship_assessor = None
    for account in services.config.accounts:
        services.account_synchronizer().run_once(account)
    services.sender_verifier = FakeVerifier()
    services.authorship_assessor = FakeAssessor()
    for subject, (sender, verdict, body) in MAIL.items():
        inbox.deliver(raw_mail(subject, sender, verdict, body), "", received_at=SENT)
