"""A deployment that drafts: an IMAP account on the test Dovecot with Inbox, Drafts and Sent
mapped and a Delivery block, beside a local peer account the drafts may be sent to."""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from log_audit import register_all
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.bootstrap import Services
from mailfathom.domain.access import ALL_PERMISSIONS, Caller
from servers.dovecot import ImapAccount
from sync.helpers import RemoteMailbox

AGENT = Caller(permissions=ALL_PERMISSIONS, label="agent")
OWNER = "owner@example.net"
PEER = "peer@example.org"


def drafting_config(
    root: Path,
    account: ImapAccount,
    *,
    port: int | None = None,
    drafts_folder: str | None = "Drafts",
    database_url: str | None = None,
) -> Path:
    secret_env = f"MF_DRAFT_SECRET_{uuid.uuid4().hex[:8].upper()}"
    os.environ[secret_env] = account.password
    drafts = (
        f'\n[[Accounts.Folders]]\nRemote = "{drafts_folder}"\nRole = "Drafts"\n'
        if drafts_folder
        else ""
    )
    store = f'DatabaseUrl = "{database_url}"' if database_url else ""
    text = f"""
[Store]
DataDir = "{root / "data"}"
{store}

[MailDelivery]
RetryBaseSeconds = 30

[[Accounts]]
Id = "work"
DisplayName = "Work"
Kind = "imap"

[Accounts.Imap]
Host = "{account.host}"
Port = {port or account.port}
Username = "{account.username}"
Tls = "none"
TimeoutSeconds = 10
Secret = {{ Env = "{secret_env}" }}

[[Accounts.Folders]]
Remote = "INBOX"
Role = "Inbox"

[[Accounts.Folders]]
Remote = "Sent"
Role = "Sent"
{drafts}
[Accounts.Delivery]
Enabled = true
Address = "{OWNER}"

[[Accounts]]
Id = "peer"
DisplayName = "Peer"
Kind = "local"
Addresses = ["{PEER}"]

[[Accounts.Folders]]
Remote = "INBOX"
Role = "Inbox"
"""
    path = root / f"mailfathom-{uuid.uuid4().hex[:6]}.toml"
    path.write_text(text, "utf-8")
    return path


@dataclass
class Drafting:
    services: Services
    account: ImapAccount
    root: Path

    def sync(self) -> None:
        work = self.services.config.account("work")
        assert work is not None
        self.services.account_synchronizer().run_once(work)

    def folder_uids(self, folder: str) -> list[int]:
        """What an independent IMAP client sees in `folder`."""
        remote = RemoteMailbox(self.account)
        try:
            return sorted(remote.flags(folder))
        finally:
            remote.close()

    def folder_messages(self, folder: str) -> list[bytes]:
        remote = RemoteMailbox(self.account)
        try:
            return remote.messages(folder)
        finally:
            remote.close()


def open_drafting(
    root: Path,
    account: ImapAccount,
    *,
    create: tuple[str, ...] = ("Drafts", "Sent"),
    **options: object,
) -> Iterator[Drafting]:
    register_all([OWNER, PEER])
    remote = RemoteMailbox(account)
    try:
        for folder in create:
            typ, _ = remote.conn.create(folder)
            assert typ == "OK"
    finally:
        remote.close()
    config = load_config(drafting_config(root, account, **options))  # type: ignore[arg-type]
    services = Services.open(config)
    try:
        yield Drafting(services, account, root)
    finally:
        services.close()


drafting_deployment = contextlib.contextmanager(open_drafting)
