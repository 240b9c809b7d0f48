"""The fleet's accounts on one or more Dovecot servers and the configuration file every
process of the fleet reads: workers, the agents' `serve`, and the drivers' own store views.

Each account maps INBOX, Archive and Drafts, sends through the capture SMTP server, and reads
its IMAP password from a file of its own. The one MCP caller, `agent`, sends without asking
anybody (`Confirmation` is left at `"none"`)."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from servers.dovecot import DovecotServer, ImapAccount
from servers.smtp import SmtpServer

FOLDERS = {"INBOX": "Inbox", "Archive": "Archive", "Drafts": "Drafts"}
SMTP_USER = "fleet-submitter"
DOMAIN = "fleet.example"


@dataclass(frozen=True)
class FleetAccount:
    account_id: str
    imap: ImapAccount
    maildir: Path
    mail_uid: int
    mail_gid: int

    @property
    def address(self) -> str:
        return f"{self.account_id}@{DOMAIN}"


def add_accounts(
    servers: list[DovecotServer], per_server: int, root: Path, tag: str
) -> list[FleetAccount]:
    """`per_server` new users on each server, their folders made and their passwords each
    written to a file of its own under `root`/secrets."""
    secrets = root / "secrets"
    secrets.mkdir(mode=0o700, parents=True, exist_ok=True)
    made: list[FleetAccount] = []
    for number, server in enumerate(servers):
        for index in range(per_server):
            account_id = f"s{number}a{index:03d}"
            password = hashlib.sha256(f"{tag}/{account_id}".encode()).hexdigest()[:24]
            imap = server.add_user(f"{tag}-{account_id}", password)
            secret = secrets / account_id
            secret.write_text(password, "utf-8")
            secret.chmod(0o600)
            account = FleetAccount(
                account_id, imap, server.maildir(imap.username), server.mail_uid, server.mail_gid
            )
            for folder in FOLDERS:
                _make_folder(account, folder)
            made.append(account)
    return made


def _make_folder(account: FleetAccount, folder: str) -> None:
    base = account.maildir / folder
    for part in ("cur", "new", "tmp"):
        (base / part).mkdir(parents=True, exist_ok=True)
    for path in (account.maildir.parent, account.maildir, base, *base.iterdir()):
        _own(account, path)


def _own(account: FleetAccount, path: Path) -> None:
    if os.geteuid() == 0:
        os.chown(path, account.mail_uid, account.mail_gid)


@dataclass(frozen=True)
class Settings:
    """What the configuration says beyond the accounts."""

    database_url: str
    mcp_port: int
    api_key: str
    lease_seconds: float
    delivery_lease_seconds: float = 20.0
    push: bool = True
    poll_seconds: float = 30.0


def write_config(
    root: Path, accounts: list[FleetAccount], smtp: SmtpServer, settings: Settings
) -> Path:
    secrets = root / "secrets"
    secrets.mkdir(mode=0o700, parents=True, exist_ok=True)
    smtp_secret = secrets / "smtp"
    smtp_secret.write_text(smtp.users[SMTP_USER], "utf-8")
    smtp_secret.chmod(0o600)
    digest = hashlib.sha256(settings.api_key.encode()).hexdigest()
    parts = [
        f"""[Store]
DataDir = "{root / "data"}"
DatabaseUrl = "{settings.database_url}"

[Sync]
LeaseSeconds = {settings.lease_seconds}

[MailDelivery]
LeaseSeconds = {settings.delivery_lease_seconds}
RetryBaseSeconds = 1

[McpEndpoint]
Enabled = true
Listen = "127.0.0.1:{settings.mcp_port}"

[[McpEndpoint.Callers]]
Name = "agent"
Credential = "apiKey"
ApiKeySha256 = "{digest}"
"""
    ]
    mode = "push" if settings.push else "polling"
    for account in accounts:
        folders = "".join(
            f'\n[[Accounts.Folders]]\nRemote = "{remote}"\nRole = "{role}"\n'
            for remote, role in FOLDERS.items()
        )
        parts.append(
            f"""[[Accounts]]
Id = "{account.account_id}"
Kind = "imap"
SyncMode = "{mode}"
PollIntervalSeconds = {settings.poll_seconds}
Addresses = ["{account.address}"]

[Accounts.Imap]
Host = "{account.imap.host}"
Port = {account.imap.port}
Username = "{account.imap.username}"
Tls = "none"
Secret = {{ File = "{secrets / account.account_id}" }}
{folders}
[Accounts.Delivery]
Enabled = true
Address = "{account.address}"

[Accounts.Delivery.Smtp]
Host = "127.0.0.1"
Port = {smtp.port}
Tls = "starttls"
Username = "{SMTP_USER}"
Secret = {{ File = "{smtp_secret}" }}
"""
        )
    path = root / "mailfathom.toml"
    path.write_text("\n".join(parts), "utf-8")
    return path
