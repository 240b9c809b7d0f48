"""A synchronization pass with a progress bar per folder."""

from __future__ import annotations

import threading

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
from mailfathom.domain.errors import LeaseLost, PassStopped
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
    """One pass over the account under its lease (refused while a worker holds it, 31008).
    Once the lease is lost the pass ends at its next batch boundary, fetching no more, and
    is refused with 31007."""
    try:
        with holding_account(services, account) as lost:
            _pass_with_progress(services, account, console, lost)
    except LeaseLost as error:
        raise LeaseLost(
            f"The pass over account '{account.account_id}' stopped: the account's lease was "
            "lost to another process, which took it over. What the pass stored is kept, and "
            "the next pass goes on from there."
        ) from error


def _pass_with_progress(
    services: Services, account: AccountConfig, console: Console, lost: threading.Event
) -> None:
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

        result = services.account_synchronizer().run_once(
            account, on_folder=show, progress=advance, stop=lost
        )
    for alias in result.missing_folders:
        console.print(f"  {account.account_id}/{alias}: not present on the server")
    # What the pass stored without readings (its inline share spent) is read now, after it.
    read = services.trust_backfill().run_until_done(account, stop=lost)
    if lost.is_set():
        raise PassStopped("The account's lease was lost; the readings stopped.")
    if read:
        console.print(f"  {account.account_id}: {read} messages verified after the pass")
