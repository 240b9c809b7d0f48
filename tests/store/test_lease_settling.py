"""Lease loops over many subjects settle, on SQLite and PostgreSQL: loops started together
split the subjects once, a late joiner takes only its share, work that is slow to stop delays
no renewal, and no lease is lost or held by two loops at once."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
import sqlalchemy as sa
import structlog.testing

from mailfathom.adapters.sql.fencing import StoreFencing
from mailfathom.adapters.sql.work_leases import SqlWorkLeases
from mailfathom.app.sync.lease_loop import LeaseLoop, LeaseWork
from mailfathom.app.sync.lease_ports import Lease, LeaseKind
from waiting import wait_for

LEASE_SECONDS = 1.5
STOPPING_SECONDS = 1.0  # how long the work takes to end once told to: two rounds and more
SUBJECTS = [f"a{i:02d}" for i in range(60)]


class Watched:
    """The store's leases, counting the claims of each worker."""

    def __init__(self, engine: sa.Engine, tally: Tally) -> None:
        self._leases = SqlWorkLeases(engine)
        self._tally = tally

    def claim(self, worker: str, *args: Any) -> list[Lease]:
        taken = self._leases.claim(worker, *args)
        with self._tally.lock:
            self._tally.claims.update((worker, lease.subject) for lease in taken)
        return taken

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method: Callable[..., Any] = getattr(self._leases, name)
        return method


class Rounds:
    """The store's leases, counting heartbeats (one a round) and noting the round of each
    claim that took something."""

    def __init__(self, engine: sa.Engine) -> None:
        self._leases = SqlWorkLeases(engine)
        self.beats = 0
        self.claimed_in: list[int] = []

    def beat(self, *args: Any) -> list[str]:
        self.beats += 1
        live: list[str] = self._leases.beat(*args)
        return live

    def claim(self, *args: Any) -> list[Lease]:
        taken = self._leases.claim(*args)
        if taken:
            self.claimed_in.append(self.beats)
        return taken

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method: Callable[..., Any] = getattr(self._leases, name)
        return method


class Tally:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.claims: Counter[tuple[str, str]] = Counter()
        self.running: Counter[str] = Counter()
        self.overlaps = 0

    def work(self, _subject: str, stop: threading.Event) -> None:
        """Runs until told to stop, then takes a while to end, like a pass finishing a batch."""
        with self.lock:
            self.running[_subject] += 1
            self.overlaps += self.running[_subject] > 1
        stop.wait()
        time.sleep(STOPPING_SECONDS)
        with self.lock:
            self.running[_subject] -= 1

    def claimed_by(self, worker: str) -> int:
        with self.lock:
            return sum(n for (w, _), n in self.claims.items() if w == worker)


def _loop(engine: sa.Engine, tally: Tally, worker: str) -> LeaseLoop:
    work = LeaseWork(LeaseKind.ACCOUNT, SUBJECTS, tally.work, fair=True)
    return LeaseLoop(
        Watched(engine, tally),
        StoreFencing(engine),
        work,
        worker=worker,
        lease_seconds=LEASE_SECONDS,
    )


def test_loops_started_together_split_the_subjects_once_and_a_late_joiner_takes_its_share(
    engine: sa.Engine,
) -> None:
    tally = Tally()
    with structlog.testing.capture_logs() as logged:
        _settle(engine, tally)
    lost = [e for e in logged if e["event"] in {"leases.lost", "leases.abandoned"}]
    assert lost == [], "no lease was lost while work was slow to stop"


def _settle(engine: sa.Engine, tally: Tally) -> None:
    loops = [_loop(engine, tally, f"w{i}") for i in range(3)]
    stop = threading.Event()
    threads = [threading.Thread(target=loop.run, args=(stop,), daemon=True) for loop in loops]
    try:
        for thread in threads:
            thread.start()
        wait_for(
            lambda: [len(loop.held()) for loop in loops] == [20, 20, 20],
            "three loops hold twenty subjects each",
        )
        time.sleep(4 * LEASE_SECONDS)  # rounds go on: nothing moves
        assert [len(loop.held()) for loop in loops] == [20, 20, 20]
        assert sorted(s for _, s in tally.claims) == SUBJECTS
        assert set(tally.claims.values()) == {1}, "each subject was claimed once"

        late = _loop(engine, tally, "w3")
        loops.append(late)
        threads.append(threading.Thread(target=late.run, args=(stop,), daemon=True))
        threads[-1].start()
        wait_for(
            lambda: [len(loop.held()) for loop in loops] == [15, 15, 15, 15],
            "four loops hold fifteen subjects each",
        )
        time.sleep(4 * LEASE_SECONDS)
        assert [len(loop.held()) for loop in loops] == [15, 15, 15, 15]
        assert tally.claimed_by("w3") == 15, "the late joiner took its share and no more"
        assert sum(tally.claims.values()) == 60 + 15
        assert tally.overlaps == 0, "no subject's work ran in two loops at once"
    finally:
        stop.set()
        for thread in threads:
            thread.join(30)


@pytest.mark.parametrize(("settle", "first_claim_round"), [(True, 2), (False, 1)])
def test_a_loop_that_need_not_settle_claims_in_its_first_round(
    engine: sa.Engine, settle: bool, first_claim_round: int
) -> None:
    """A fleet's worker is seen alive a round before it claims; where one process is all that
    synchronizes (SQLite) that round would only delay the start, and is left out."""
    rounds = Rounds(engine)

    def run(_subject: str, stop: threading.Event) -> None:
        stop.wait()

    work = LeaseWork(LeaseKind.ACCOUNT, SUBJECTS[:3], run, fair=True)
    loop = LeaseLoop(
        rounds, StoreFencing(engine), work, worker="w0", lease_seconds=LEASE_SECONDS, settle=settle
    )
    stop = threading.Event()
    thread = threading.Thread(target=loop.run, args=(stop,), daemon=True)
    thread.start()
    try:
        wait_for(lambda: len(loop.held()) == 3, "the loop holds every subject")
        assert rounds.claimed_in == [first_claim_round]
    finally:
        stop.set()
        thread.join(30)
