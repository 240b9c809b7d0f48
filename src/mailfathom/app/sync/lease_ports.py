"""What the lease loop needs of the store: leases on background work, and fencing of the
writes made under one (see `lease_loop`)."""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol


class LeaseKind(enum.Enum):
    ACCOUNT = "account"  # an account's synchronization, by account id
    DEPLOYMENT = "deployment"  # work one worker of the deployment does, by name


@dataclass(frozen=True, slots=True)
class Lease:
    """A claim a worker holds: what on (`kind`, `subject`) and under which `fence`, the
    number its claim gave the row (every claim adds one)."""

    kind: LeaseKind
    subject: str
    fence: int


class WorkLeases(Protocol):
    def now(self) -> datetime:
        """The clock every worker sharing the store reads: expiries and heartbeats are set
        from it and compared with it, so machines whose own clocks disagree agree on it."""

    def offer(self, kind: LeaseKind, subjects: Sequence[str]) -> None:
        """Make sure every subject has a lease row (free until claimed)."""

    def beat(self, worker: str, now: datetime, until: datetime) -> list[str]:
        """Say this worker is alive until `until`; answers the workers alive at `now`
        (itself included), sorted by name."""

    def claim(
        self,
        worker: str,
        kind: LeaseKind,
        subjects: Sequence[str],
        now: datetime,
        until: datetime,
        limit: int,
    ) -> list[Lease]:
        """Claim up to `limit` of `subjects` whose lease is free or expired at `now`, until
        `until`, each under a new fence. An expired lease still in `worker`'s own name is
        taken back like any other: the work begun under its former fence is then fenced off."""

    def renew(
        self, worker: str, leases: Sequence[Lease], now: datetime, until: datetime
    ) -> set[str]:
        """Extend the leases `worker` still holds under the same fence; answers their
        subjects. A lease missing from the answer was taken over."""

    def release(self, worker: str, leases: Sequence[Lease]) -> None:
        """Give up leases `worker` holds, so another worker may claim them at once."""

    def depart(self, worker: str) -> None:
        """Forget the worker's heartbeat (a clean stop)."""

    def holders(self, kind: LeaseKind) -> dict[str, str | None]:
        """Every subject's holder (None: free), as the store has it now."""


class Fencing(Protocol):
    def fenced(
        self, worker: str, lease: Lease, on_lost: Callable[[], None]
    ) -> AbstractContextManager[None]:
        """While inside, every write transaction begun in this context (and in the threads
        started from it with its context copied) first checks that `worker` still holds
        `lease` and is refused with `LeaseLost` otherwise, after calling `on_lost`."""
