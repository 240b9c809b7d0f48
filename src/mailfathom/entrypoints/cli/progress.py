"""A synchronization pass with a progress bar per folder."""

from __future__ import annotations

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
)

from mailfathom.app.sync.types import SyncReport
from mailfathom.bootstrap import Services
from mailfathom.domain.config import AccountConfig
from mailfathom.entrypoints.workers.synchronization import holding_account


def counting_bar(console: Console) -> Progress:
    """A bar of items done out of all, with the time left, gone once it is finished."""
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
    )


def sync_with_progress(services: Services, account: AccountConfig, console: Console) -> None:
    """One pass over the account under its lease (refused while a worker holds it)."""
    with holding_account(services, account):
        _pass_with_progress(services, account, console)


def _pass_with_progress(services: Services, account: AccountConfig, console: Console) -> None:
    tasks: dict[str, TaskID] = {}
    with counting_bar(console) as bar:

        def advance(alias: str, stored: int, total: int) -> None:
            if alias not in tasks:
                tasks[alias] = bar.add_task(f"{account.account_id}/{alias}", total=total)
            bar.update(tasks[alias], completed=stored, total=total)

        def show(report: SyncReport) -> None:
            bar.console.print(
                f"  {account.account_id}/{report.folder_alias}: {report.stored} new, "
                f"{report.flags_updated} flag changes, {report.removed} removed"
                + (", renumbered by the server" if report.uidvalidity_reset else "")
            )

        result = services.account_synchronizer().run_once(account, on_folder=show, progress=advance)
    for alias in result.missing_folders:
        console.print(f"  {account.account_id}/{alias}: not present on the server")
    # What the pass stored without readings (its inline share spent) is read now, after it.
    read = services.trust_backfill().run_until_done(account)
    if read:
        console.print(f"  {account.account_id}: {read} messages verified after the pass")
