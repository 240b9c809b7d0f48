"""Importing existing mail (a Maildir, .eml files or an mbox) into a local account."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from mailfathom.bootstrap import ImportCount, Services
from mailfathom.domain.config import AccountConfig, AccountKind
from mailfathom.domain.errors import ConfigurationError, LeaseHeld
from mailfathom.entrypoints.cli.loading import account_not_configured
from mailfathom.entrypoints.cli.progress import sync_with_progress


def import_into_local(
    services: Services, account_id: str, folder: str, source: Path
) -> ImportCount:
    account = services.config.account(account_id)
    if account is None:
        raise account_not_configured(account_id)
    if account.kind is not AccountKind.LOCAL:
        raise ConfigurationError(f"Account '{account_id}' is not a local account.")
    if folder.upper() == "INBOX":
        folder = "INBOX"  # as the configuration stores it: INBOX is named in any case
    if folder not in {m.remote_name for m in account.folders}:
        raise ConfigurationError(f"Account '{account_id}' maps no folder with that name.")
    return services.import_mail(account_id, folder, source.expanduser())


def synchronize_imported(services: Services, account: AccountConfig, console: Console) -> None:
    """The pass that stores what was just filed. While a running process (`serve`, `sync
    --continuous`, a worker) holds the account, the pass is refused (31008) and has nothing
    to do: that process watches the account's Maildir folders and stores the filed mail
    itself, so the import is done and says who finishes it."""
    try:
        sync_with_progress(services, account, console)
    except LeaseHeld:
        console.print(
            f"{account.account_id}: a running process (serve, sync --continuous or a worker) "
            "synchronizes this account and stores the imported mail."
        )
