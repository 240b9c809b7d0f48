"""A continuous run carries a change recorded by another process while it was carrying
earlier ones, at its next reading of the store, not at its polling interval."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Any

from mailfathom.app.sync.change_carrying import carry_changes
from mailfathom.app.sync.credential_waits import CredentialWaits
from mailfathom.domain.config import AccountConfig, AccountKind, FolderMapping
from mailfathom.domain.folders import FolderRole
from waiting import wait_for

ACCOUNT = AccountConfig(
    "desk",
    "Desk",
    AccountKind.LOCAL,
    (FolderMapping("INBOX", "INBOX", FolderRole.INBOX),),
    # Only a reading of the store can start the work again within the test.
    poll_interval_seconds=3600.0,
)


class Session:
    def close(self) -> None:
        pass


class Ledger:
    """Open changes as a store holds them, recorded "by another process": no wake is ever
    signalled, as none crosses processes. `during_carry` runs once the carry has read what
    was open, as a recorder elsewhere might at that moment."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.open: list[int] = []
        self.carried: list[int] = []
        self._next = 1
        self.during_carry: Callable[[], None] | None = None

    def record(self) -> int:
        with self._lock:
            seq = self._next
            self._next += 1
            self.open.append(seq)
            return seq

    def waiting(self, account_id: str) -> bool:
        with self._lock:
            return bool(self.open)

    def mark(self, account_id: str) -> Hashable:
        with self._lock:
            return (len(self.open), max(self.open, default=0))

    def carry(self, account: AccountConfig, session: Any) -> None:
        with self._lock:
            taken = list(self.open)
        hook, self.during_carry = self.during_carry, None
        if hook is not None:
            hook()
        with self._lock:
            self.open = [s for s in self.open if s not in taken]
            self.carried.extend(taken)

    def listen(self, account_id: str, wake: Callable[[], None]) -> None:
        pass

    def unlisten(self, account_id: str, wake: Callable[[], None]) -> None:
        pass


def test_a_change_recorded_during_a_carry_is_carried_at_the_next_reading() -> None:
    ledger = Ledger()
    first = ledger.record()
    second: list[int] = []
    ledger.during_carry = lambda: second.append(ledger.record())
    stop = threading.Event()
    run = threading.Thread(
        target=carry_changes,
        args=(lambda account: Session(), CredentialWaits(None, None), ACCOUNT, ledger, stop),
        daemon=True,
    )
    run.start()
    try:
        wait_for(lambda: first in ledger.carried, "the first change carried", timeout=30.0)
        wait_for(
            lambda: second and second[0] in ledger.carried,
            "the change recorded during the carry carried",
            timeout=30.0,
        )
    finally:
        stop.set()
        run.join(30)
    assert not run.is_alive()
    assert ledger.open == []
