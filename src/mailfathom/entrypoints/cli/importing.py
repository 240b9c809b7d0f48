"""Importing existing mail (a Maildir, .eml files or an mbox) into a local account."""

from __future__ import annotations

import time
from pathlib import Path

from rich.console import Console

from mailfathom.app.sync.lease_loop import ROUNDS_PER_LEASE
from mailfathom.app.sync.lease_ports import LeaseKind
from mailfathom.bootstrap import ImportCount, Services
from mailfathom.domain.config import AccountConfig, AccountKind
from mailfathom.domain.errors import ConfigurationError, LeaseHeld
from mailfathom.entrypoints.cli.loading import account_not_configured
from mailfathom.entrypoints.cli.progress import sync_with_progress

# How many lease periods the import waits for a pass run once that holds the account: a pass
# over a local account's Maildir is usually short, and a longer wait would hold the command
# for a pass of unknown length.
WAIT_LEASES = 3


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
    """The pass that stores what was just filed, refused (31008) while another holds the
    account's lease. A continuous process (`serve`, `sync --continuous`, a worker) watches the
    account's Maildir folders and stores the filed mail itself, so the import is done and says
    who finishes it. A pass run once (`sync`, another `import`) may have read the folder
    before the mail was filed: the import waits for it, up to `WAIT_LEASES` lease periods,
    and then runs its own pass; one still running after that is refused (31008) saying that
    `mailfathom sync` stores the mail afterwards."""
    lease_seconds = services.config.sync.lease_seconds
    bound = WAIT_LEASES * lease_seconds
    deadline = time.monotonic() + bound
    waiting = False
    while True:
        try:
            sync_with_progress(services, account, console)
            return
        except LeaseHeld:
            leases = services.work_leases()
            if leases.held_by_live_worker(LeaseKind.ACCOUNT, account.account_id):
                console.print(
                    f"{account.account_id}: a running process (serve, sync --continuous or a "
                    "worker) synchronizes this account and stores the imported mail."
                )
                return
            if time.monotonic() >= deadline:
                raise LeaseHeld(
                    f"Another pass (mailfathom sync or import) still holds account "
                    f"'{account.account_id}' after {bound:g} s. The imported mail is filed; "
                    f"`mailfathom sync -a {account.account_id}` run once that pass ended "
                    "stores it."
                ) from None
            if not waiting:
                console.print(
                    f"{account.account_id}: another pass (mailfathom sync or import) holds "
                    f"this account; waiting up to {bound:g} s for it to end."
                )
                waiting = True
            time.sleep(lease_seconds / ROUNDS_PER_LEASE)
