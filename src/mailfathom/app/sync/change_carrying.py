"""Carrying the owner changes recorded for an account (flags, moves, folder creations) to its
mail server, for as long as the account's continuous run goes on."""

from __future__ import annotations

import threading
from collections.abc import Callable

from mailfathom.app.sync.change_waits import recorded_since, wait_for_changes
from mailfathom.app.sync.credential_waits import CredentialWaits
from mailfathom.app.sync.pass_outcomes import log_unexpected
from mailfathom.app.sync.ports import MailboxSession, OwnerChanges
from mailfathom.domain.config import AccountConfig
from mailfathom.domain.errors import (
    ConsentRequired,
    LeaseLost,
    MailServerAuthError,
    SyncError,
)


def carry_changes(
    opened: Callable[[AccountConfig], MailboxSession],
    waits: CredentialWaits,
    account: AccountConfig,
    changes: OwnerChanges,
    stop: threading.Event,
    after_carry: Callable[[], None] | None = None,
) -> None:
    """Carry recorded changes as soon as one is written and otherwise once per polling
    interval, over a short session of its own (`opened`): a folder waiting in IDLE hears of
    the change from the server and reads it back. A recorder in this process wakes the run
    at once; one in another process (`serve --no-sync` beside `sync --continuous`) is
    noticed by reading the store's open records every `LEDGER_SLICE` seconds."""
    wake = threading.Event()
    changes.listen(account.account_id, wake.set)
    try:
        _carry_until_stopped(opened, waits, account, changes, stop, wake, after_carry)
    finally:
        changes.unlisten(account.account_id, wake.set)


def _carry_until_stopped(
    opened: Callable[[AccountConfig], MailboxSession],
    waits: CredentialWaits,
    account: AccountConfig,
    changes: OwnerChanges,
    stop: threading.Event,
    wake: threading.Event,
    after_carry: Callable[[], None] | None,
) -> None:
    backoff = 5.0
    while not stop.is_set():
        wake.clear()
        wait = float(account.poll_interval_seconds)
        watch: Callable[[], bool] | None = None
        try:
            # Read before carrying: a change another process records while the carry runs
            # (after the carry read what was open) leaves the store unlike this reading, so
            # the wait below ends at its next reading, not at the polling interval. What
            # the carry itself closes ends it too, for one more look.
            seen = recorded_since(changes, account.account_id)
            if changes.waiting(account.account_id):
                session = opened(account)
                try:
                    changes.carry(account, session)
                finally:
                    session.close()
                if after_carry is not None:
                    after_carry()
            backoff = 5.0
            watch = seen
        except LeaseLost:
            return
        except ConsentRequired:
            if not waits.await_consent(account, stop):
                return
            continue
        except MailServerAuthError:
            if not waits.await_new_secret(account, stop):
                return
            continue
        except Exception as error:  # the changes are carried again after the back-off
            if not isinstance(error, SyncError):
                log_unexpected(error, account.account_id, backoff)
            wait = backoff
            backoff = min(backoff * 2, 600.0)
        wait_for_changes(wake, stop, wait, watch)
