"""What the organizing tests share: the extra folders and mail of their deployments."""

from __future__ import annotations

from datetime import timedelta

import sqlalchemy as sa

from mailfathom.adapters.sql.engine import create_store_engine, sqlite_url
from mailfathom.adapters.sql.schema import folders, messages
from mcp_tests.deployment import BASE, Deployment, message
from servers.dovecot import ImapAccount
from sync.helpers import RemoteMailbox

HEAP = "Heap"
HEAP_COUNT = 101


def more_folders(account: ImapAccount, secret_env: str) -> str:
    """Trash and Heap for the deployment's account, and a second account reading the folder
    Elsewhere of the same mailbox."""
    return f"""
[[Accounts.Folders]]
Remote = "Trash"
Alias = "Trash"
Role = "Trash"

[[Accounts.Folders]]
Remote = "{HEAP}"
Alias = "{HEAP}"

[[Accounts]]
Id = "other"
DisplayName = "Other Mail"
Kind = "imap"

[Accounts.Imap]
Host = "{account.host}"
Port = {account.port}
Username = "{account.username}"
Tls = "none"
Secret = {{ Env = "{secret_env}" }}

[[Accounts.Folders]]
Remote = "Elsewhere"
Alias = "Elsewhere"
"""


def fill_heap(mailbox: RemoteMailbox) -> None:
    for folder in ("Trash", HEAP, "Elsewhere"):
        mailbox.conn.create(folder)
    for n in range(HEAP_COUNT):
        mailbox.append(message(f"Heap item {n:03d}", sent=BASE - timedelta(minutes=n)), HEAP)
    mailbox.append(message("Elsewhere item", sent=BASE), "Elsewhere")


def withheld_email(d: Deployment) -> str:
    """An email of the Private folder, which is withheld from tools: read from the store."""
    engine = create_store_engine(sqlite_url(d.data_dir / "mailfathom.sqlite3"))
    try:
        with engine.connect() as c:
            value = c.execute(
                sa.select(messages.c.stored_email_id)
                .join(folders, folders.c.folder_id == messages.c.folder_id)
                .where(folders.c.alias == "Private")
            ).scalar_one()
    finally:
        engine.dispose()
    return str(value)
