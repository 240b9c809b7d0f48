"""A synchronization pass with a progress display."""

from __future__ import annotations

from rich.console import Console

from mailfathom.app.sync_types import SyncReport
from mailfathom.bootstrap import Services
from mailfathom.domain.config import AccountConfig


def sync_with_progress(services: Services, account: AccountConfig, console: Console) -> None:
    def show(report: SyncReport) -> None:
        console.print(
            f"  {account.account_id}/{report.folder_alias}: {report.stored} new, "
            f"{report.flags_updated} flag changes, {report.removed} removed"
            + (", renumbered by the server" if report.uidvalidity_reset else "")
        )

    with console.status(f"Synchronizing {account.account_id}…", spinner="dots"):
        result = services.account_synchronizer().run_once(account, on_folder=show)
    for alias in result.missing_folders:
        console.print(f"  {account.account_id}/{alias}: not present on the server")
