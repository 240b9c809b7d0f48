"""The demo: a local deployment with a generated mailbox, synchronized into SQLite."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table

from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.adapters.local.sample_mail import generate_mailbox
from mailfathom.bootstrap import Services
from mailfathom.entrypoints.cli.progress import sync_with_progress

DEMO_CONFIG = """\
# The demo deployment: one local account, kept in the embedded SQLite store.
[Store]
DataDir = "data"

[[Accounts]]
Id = "demo"
DisplayName = "Demo mailbox"
Kind = "local"
Addresses = ["owner@example.org"]

[[Accounts.Folders]]
Remote = "INBOX"
Alias = "INBOX"
Role = "Inbox"

[[Accounts.Folders]]
Remote = "Sent"
Alias = "Sent"
Role = "Sent"

[[Accounts.Folders]]
Remote = "Archive"
Alias = "Archive"
Role = "Archive"

[[Accounts.Folders]]
Remote = "Junk"
Alias = "Junk"
Role = "Junk"
"""


def run(data_dir: Path, messages: int, console: Console) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    config_path = data_dir / "mailfathom.toml"
    if not config_path.exists():
        config_path.write_text(DEMO_CONFIG, "utf-8")
    config = load_config(config_path)
    with Services.open(config) as services:
        (account,) = config.accounts
        marker = data_dir / ".generated"
        if not marker.exists():
            for sample in generate_mailbox(messages):
                folder = services.connectors.local.folder(account.account_id, sample.folder)
                folder.deliver(sample.raw, sample.flags)
            marker.write_text(str(messages), "ascii")
            console.print(f"Generated {messages} messages in {data_dir / 'data' / 'local'}")
        sync_with_progress(services, account, console)
        summary = services.store.summary(account.account_id)
        table = Table("folder", "messages", "conversations", "with attachments", "unread")
        for row in summary:
            table.add_row(*(str(v) for v in row))
        console.print(table)
        console.print(
            f"Store: {config.store.sqlite_path}\n"
            f"Configuration: {config_path} (use it with --config for the other commands)"
        )
