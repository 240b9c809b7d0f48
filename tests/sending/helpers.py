"""A deployment that sends: accounts with Delivery blocks, the test SMTP server, a clock."""

from __future__ import annotations

import email
import email.policy
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from pathlib import Path

import pytest

from fakes.deployment import FakeDeployment
from log_audit import register_all
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.app.reading.list_emails import TimelineRequest
from mailfathom.app.shared.mailbox_selection import SelectionInput
from mailfathom.bootstrap import Services
from mailfathom.domain.access import ALL_PERMISSIONS, Caller
from servers.smtp import SmtpServer

SMTP_USER = "submitter"
SMTP_PASSWORD = "pw-" + uuid.uuid4().hex
AGENT = Caller(permissions=ALL_PERMISSIONS, label="agent")
OTHER_AGENT = Caller(permissions=ALL_PERMISSIONS, label="other-agent")


class Clock:
    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


class StoreTime:
    """The store's clock, the clock of a process `skew` from it, and the passing of time on
    the store's clock. PostgreSQL reads the real time, so the test waits for it; a SQLite
    store's clock is the one machine's, which no process of that machine is skewed from."""

    def __init__(self, postgres: bool) -> None:
        self._manual = None if postgres else Clock(datetime.now(UTC))

    def now(self) -> datetime:
        return datetime.now(UTC) if self._manual is None else self._manual()

    def process(self, skew: timedelta) -> Callable[[], datetime]:
        if self._manual is None:
            return lambda: datetime.now(UTC) + skew
        return self._manual

    def wait_until(self, instant: datetime) -> None:
        remaining = (instant - self.now()).total_seconds()
        if remaining <= 0:
            return
        if self._manual is None:
            time.sleep(remaining)
        else:
            self._manual.advance(remaining)


def sending_config(
    directory: Path,
    smtp: SmtpServer | None,
    *,
    mail_delivery: str = "",
    deployment: str = "",
    extra_accounts: str = "",
    enabled: bool = True,
    addresses: tuple[str, ...] = ("me@example.org",),
) -> Path:
    smtp_block = ""
    if smtp is not None:
        smtp_block = f"""
[Accounts.Delivery.Smtp]
Host = "127.0.0.1"
Port = {smtp.port}
Tls = "{"implicit" if smtp.implicit_tls else "starttls"}"
Username = "{SMTP_USER}"
Secret = {{ Env = "MAILFATHOM_TEST_SMTP_SECRET" }}
"""
    text = f"""
[Store]
DataDir = "{directory / "data"}"

{deployment}

[MailDelivery]
{mail_delivery if "RetryBaseSeconds" in mail_delivery else "RetryBaseSeconds = 30"}
{mail_delivery if "RetryBaseSeconds" not in mail_delivery else ""}

[[Accounts]]
Id = "work"
DisplayName = "Work"
Kind = "local"
Addresses = [{", ".join(f'"{a}"' for a in addresses)}]

[[Accounts.Folders]]
Remote = "INBOX"
Role = "Inbox"

[[Accounts.Folders]]
Remote = "Sent"
Role = "Sent"

[Accounts.Delivery]
Enabled = {"true" if enabled else "false"}
Address = "me@example.org"
DisplayName = "Mé Example"
{smtp_block}
{extra_accounts}
"""
    path = directory / "mailfathom.toml"
    path.write_text(text)
    return path


@dataclass
class SendingDeployment:
    services: Services
    clock: Clock
    smtp: SmtpServer | None


def open_deployment(
    directory: Path, smtp: SmtpServer | None, monkeypatch: pytest.MonkeyPatch, **options: object
) -> Iterator[SendingDeployment]:
    register_all(["me@example.org", "Mé Example", SMTP_PASSWORD])
    monkeypatch.setenv("MAILFATHOM_TEST_SMTP_SECRET", SMTP_PASSWORD)
    config = load_config(sending_config(directory, smtp, **options))  # type: ignore[arg-type]
    clock = Clock(datetime(2026, 7, 1, 9, 0, tzinfo=UTC))
    services = Services.open(config, clock=clock)
    try:
        yield SendingDeployment(services, clock, smtp)
    finally:
        services.close()


def fake_deployment(
    directory: Path, monkeypatch: pytest.MonkeyPatch, **options: object
) -> FakeDeployment:
    """The same deployment's writing use cases over the in-memory store, for tests of what
    the use cases decide (the store's own behaviour is its contract suites')."""
    register_all(["me@example.org", "Mé Example", SMTP_PASSWORD])
    monkeypatch.setenv("MAILFATHOM_TEST_SMTP_SECRET", SMTP_PASSWORD)
    config = load_config(sending_config(directory, None, **options))  # type: ignore[arg-type]
    return FakeDeployment(config)


def stored(d: SendingDeployment, raw: bytes) -> str:
    """Put `raw` into the work account's inbox, synchronize, and answer its storedEmailId."""
    d.services.connectors.local.folder("work", "INBOX").deliver(raw)
    account = d.services.config.account("work")
    assert account is not None
    d.services.account_synchronizer().run_once(account)
    page = d.services.reading().timeline.read(
        AGENT, TimelineRequest(selection=SelectionInput(accounts=["work"], folders=["INBOX"]))
    )
    return str(page.emails[0].stored_email_id)


def deliver_and_read(services: Services, smtp: SmtpServer) -> tuple[list[str], EmailMessage]:
    """Run one delivery pass and parse the one message the SMTP server received, as a
    receiving program would (the standard library's `email` package, default policy)."""
    services.delivery_pass(tls_context=smtp.client_context).run_once()
    (received,) = smtp.received()
    message = email.message_from_bytes(received.content, policy=email.policy.default)
    assert isinstance(message, EmailMessage)
    return received.rcpt_tos, message
