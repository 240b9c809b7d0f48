"""A deployment that sends: accounts with Delivery blocks, the test SMTP server, a clock."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from log_audit import register_all
from mailfathom.adapters.config.toml_loader import load_config
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


def sending_config(
    directory: Path,
    smtp: SmtpServer | None,
    *,
    mail_delivery: str = "",
    deployment: str = "",
    extra_accounts: str = "",
    enabled: bool = True,
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
Addresses = ["me@example.org"]

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
    directory: Path, smtp: SmtpServer | None, monkeypatch: object, **options: object
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
