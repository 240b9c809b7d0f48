"""The lease loop over the real store (SQLite and PostgreSQL): the deployment's single work
(embedding) runs in one worker at a time and moves to another when its holder stops, and a
worker whose lease is taken over stops that work at its next renewal."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa

from mailfathom.adapters.sql.fencing import StoreFencing
from mailfathom.adapters.sql.schema import work_leases
from mailfathom.adapters.sql.work_leases import SqlWorkLeases
from mailfathom.app.sync.lease_loop import LeaseLoop, LeaseWork
from mailfathom.app.sync.lease_ports import LeaseKind
from waiting import wait_for

LEASE_SECONDS = 1.0


class Work:
    """Work that runs until told to stop, counting who runs it and how many at once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.running: list[str] = []
        self.most_at_once = 0
        self.runs: list[str] = []

    def for_worker(self, worker: str) -> LeaseWork:
        def run(_subject: str, stop: threading.Event) -> None:
            with self._lock:
                self.running.append(worker)
                self.runs.append(worker)
                self.most_at_once = max(self.most_at_once, len(self.running))
            stop.wait()
            with self._lock:
                self.running.remove(worker)

        return LeaseWork(LeaseKind.DEPLOYMENT, ["embedding"], run, fair=False)


def _loop(engine: sa.Engine, work: LeaseWork, worker: str) -> LeaseLoop:
    return LeaseLoop(
        SqlWorkLeases(engine),
        StoreFencing(engine),
        work,
        worker=worker,
        lease_seconds=LEASE_SECONDS,
        clock=lambda: datetime.now(UTC),
    )


def _start(loop: LeaseLoop) -> tuple[threading.Event, threading.Thread]:
    stop = threading.Event()
    thread = threading.Thread(target=loop.run, args=(stop,), daemon=True)
    thread.start()
    return stop, thread


def test_the_deployments_single_work_runs_in_one_worker_and_moves_when_it_stops(
    engine: sa.Engine,
) -> None:
    work = Work()
    first_stop, first = _start(_loop(engine, work.for_worker("w1"), "w1"))
    wait_for(lambda: work.running == ["w1"], "the first worker runs the work")
    second_stop, second = _start(_loop(engine, work.for_worker("w2"), "w2"))
    try:
        # Several rounds of both loops: the second never runs it beside the first.
        threading.Event().wait(3 * LEASE_SECONDS)
        assert work.running == ["w1"]
        first_stop.set()
        first.join(10)
        wait_for(lambda: work.running == ["w2"], "the second worker takes the work over")
        assert work.most_at_once == 1
        assert work.runs == ["w1", "w2"]
    finally:
        first_stop.set()
        second_stop.set()
        first.join(10)
        second.join(10)
    assert SqlWorkLeases(engine).holders(LeaseKind.DEPLOYMENT) == {"embedding": None}


def test_a_worker_whose_lease_was_taken_over_stops_the_work(engine: sa.Engine) -> None:
    work = Work()
    stop, thread = _start(_loop(engine, work.for_worker("w1"), "w1"))
    try:
        wait_for(lambda: work.running == ["w1"], "the worker runs the work")
        with engine.begin() as c:
            c.execute(
                sa.update(work_leases)
                .where(work_leases.c.subject == "embedding")
                .values(
                    holder="intruder",
                    fence=work_leases.c.fence + 1,
                    expires_at=datetime.now(UTC) + timedelta(hours=1),
                )
            )
        wait_for(lambda: work.running == [], "the work stopped at the refused renewal")
        assert SqlWorkLeases(engine).holders(LeaseKind.DEPLOYMENT) == {"embedding": "intruder"}
    finally:
        stop.set()
        thread.join(10)
