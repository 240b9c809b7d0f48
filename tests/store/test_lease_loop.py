"""The lease loop over the real store (SQLite and PostgreSQL): the deployment's single work
(embedding) runs in one worker at a time and moves to another when its holder stops, and a
worker whose lease is taken over stops that work at its next renewal."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa

from mailfathom.adapters.sql.fencing import StoreFencing
from mailfathom.adapters.sql.lease_recheck import SqlLeaseRecheck
from mailfathom.adapters.sql.schema import lease_workers, work_leases
from mailfathom.adapters.sql.work_leases import SqlWorkLeases
from mailfathom.app.sync.lease_hold import holding
from mailfathom.app.sync.lease_loop import LeaseLoop, LeaseWork, fair_share
from mailfathom.app.sync.lease_ports import LeaseKind
from mailfathom.domain.errors import LeaseHeld, LeaseLost
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


class Unreachable(ConnectionError):
    pass


class FlakyLeases:
    """The store's leases, unreachable while `down` is set (every call then fails)."""

    def __init__(self, engine: sa.Engine) -> None:
        self._leases = SqlWorkLeases(engine)
        self.down = threading.Event()

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method: Callable[..., Any] = getattr(self._leases, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            if self.down.is_set():
                raise Unreachable
            return method(*args, **kwargs)

        return call


def _until_stopped(_subject: str, stop: threading.Event) -> None:
    stop.wait()


def _accounts(subjects: Sequence[str]) -> LeaseWork:
    return LeaseWork(LeaseKind.ACCOUNT, subjects, _until_stopped, fair=True)


def _loop(engine: sa.Engine, work: LeaseWork, worker: str, leases: Any = None) -> LeaseLoop:
    return LeaseLoop(
        leases or SqlWorkLeases(engine),
        StoreFencing(engine),
        work,
        worker=worker,
        lease_seconds=LEASE_SECONDS,
    )


def _start(loop: LeaseLoop) -> tuple[threading.Event, threading.Thread]:
    stop = threading.Event()
    thread = threading.Thread(target=loop.run, args=(stop,), daemon=True)
    thread.start()
    return stop, thread


def _take_over(engine: sa.Engine, subject: str) -> None:
    with engine.begin() as c:
        c.execute(
            sa.update(work_leases)
            .where(work_leases.c.subject == subject)
            .values(
                holder="intruder",
                fence=work_leases.c.fence + 1,
                expires_at=datetime.now(UTC) + timedelta(hours=1),
            )
        )


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
        _take_over(engine, "embedding")
        wait_for(lambda: work.running == [], "the work stopped at the refused renewal")
        assert SqlWorkLeases(engine).holders(LeaseKind.DEPLOYMENT) == {"embedding": "intruder"}
    finally:
        stop.set()
        thread.join(10)


def test_a_worker_takes_its_share_back_after_the_store_was_unreachable_for_a_lease_period(
    engine: sa.Engine,
) -> None:
    subjects = ["a1", "a2", "a3"]
    leases = FlakyLeases(engine)
    loop = _loop(engine, _accounts(subjects), "w1", leases)
    stop, thread = _start(loop)
    try:
        wait_for(lambda: loop.held() == subjects, "the lone worker holds every account")
        leases.down.set()
        wait_for(lambda: loop.held() == [], "the work stopped once nothing was renewed")
        threading.Event().wait(LEASE_SECONDS)  # the leases, still in its name, expire
        leases.down.clear()
        wait_for(lambda: loop.held() == subjects, "the worker took its accounts back")
        holders = SqlWorkLeases(engine).holders(LeaseKind.ACCOUNT)
        assert holders == dict.fromkeys(subjects, "w1")
    finally:
        stop.set()
        thread.join(10)


def test_a_loop_started_while_the_store_is_unreachable_claims_once_it_answers(
    engine: sa.Engine,
) -> None:
    subjects = ["a1", "a2"]
    leases = FlakyLeases(engine)
    leases.down.set()
    loop = _loop(engine, _accounts(subjects), "w1", leases)
    stop, thread = _start(loop)
    try:
        threading.Event().wait(LEASE_SECONDS)  # several rounds fail, the first among them
        assert thread.is_alive(), "the loop gave up"
        leases.down.clear()
        wait_for(lambda: loop.held() == subjects, "the worker claimed once the store answered")
    finally:
        stop.set()
        thread.join(10)


def test_four_workers_over_nine_accounts_each_hold_two_or_three(engine: sa.Engine) -> None:
    subjects = [f"a{i}" for i in range(9)]
    loops = [_loop(engine, _accounts(subjects), f"w{i}") for i in range(4)]
    started = [_start(loop) for loop in loops]
    try:
        wait_for(
            lambda: sorted(len(loop.held()) for loop in loops) == [2, 2, 2, 3],
            "the accounts spread two or three to a worker",
        )
        held = [subject for loop in loops for subject in loop.held()]
        assert sorted(held) == subjects
    finally:
        for stop, _thread in started:
            stop.set()
        for _stop, thread in started:
            thread.join(10)


def test_fair_shares_add_up_to_the_subjects_and_differ_by_one_at_most() -> None:
    for total in range(12):
        for count in range(1, 6):
            live = [f"w{i}" for i in range(count)]
            shares = [fair_share(total, live, worker) for worker in live]
            assert sum(shares) == total
            assert max(shares) - min(shares) <= 1
    assert fair_share(4, ["w1", "w2"], "w3") == 1  # not yet seen among the live: counted


def test_workers_whose_clocks_disagree_keep_their_leases(postgres_engine: sa.Engine) -> None:
    """One machine's clock two lease periods ahead: expiry and liveness are read against
    the store's clock, so neither worker sees the other dead or its leases expired."""
    subjects = ["a1", "a2", "a3"]
    ahead = timedelta(seconds=2 * LEASE_SECONDS)

    def clock(skew: timedelta) -> Callable[[], datetime]:
        return lambda: datetime.now(UTC) + skew

    loops = [
        LeaseLoop(
            SqlWorkLeases(postgres_engine, clock=clock(skew)),
            StoreFencing(postgres_engine),
            _accounts(subjects),
            worker=worker,
            lease_seconds=LEASE_SECONDS,
        )
        for worker, skew in (("w1", timedelta(0)), ("w2", ahead))
    ]
    started = [_start(loop) for loop in loops]
    try:
        wait_for(lambda: sorted(len(loop.held()) for loop in loops) == [1, 2], "shared out")
        shared = SqlWorkLeases(postgres_engine).holders(LeaseKind.ACCOUNT)
        for _ in range(3 * 3):  # three lease periods, a third at a time
            threading.Event().wait(LEASE_SECONDS / 3)
            assert SqlWorkLeases(postgres_engine).holders(LeaseKind.ACCOUNT) == shared
    finally:
        for stop, _thread in started:
            stop.set()
        for _stop, thread in started:
            thread.join(10)


def test_work_done_once_holds_its_lease_throughout_and_hears_of_a_takeover(
    engine: sa.Engine,
) -> None:
    leases = SqlWorkLeases(engine)
    hold = holding(
        leases,
        StoreFencing(engine),
        LeaseKind.ACCOUNT,
        "a1",
        worker="once",
        lease_seconds=LEASE_SECONDS,
    )
    with hold as lost:
        threading.Event().wait(2 * LEASE_SECONDS)  # renewed past its first expiry
        assert leases.holders(LeaseKind.ACCOUNT) == {"a1": "once"}
        with (
            pytest.raises(LeaseHeld),
            holding(
                leases,
                StoreFencing(engine),
                LeaseKind.ACCOUNT,
                "a1",
                worker="again",
                lease_seconds=LEASE_SECONDS,
            ),
        ):
            pass
        _take_over(engine, "a1")
        wait_for(lost.is_set, "the holder heard its lease was taken over")
    assert leases.holders(LeaseKind.ACCOUNT) == {"a1": "intruder"}


def test_a_stopping_loop_gives_back_the_lease_of_work_deaf_to_its_stop_and_fences_it(
    engine: sa.Engine,
) -> None:
    """The loop waits `stop_seconds` for the work, not the lease period, then gives the lease
    back and leaves; what the work writes after that is refused."""
    go_on = threading.Event()
    outcome: list[str] = []

    def deaf(_subject: str, _stop: threading.Event) -> None:
        go_on.wait()
        try:
            SqlLeaseRecheck(engine).recheck()
            outcome.append("written")
        except LeaseLost:
            outcome.append("refused")

    loop = LeaseLoop(
        SqlWorkLeases(engine),
        StoreFencing(engine),
        LeaseWork(LeaseKind.ACCOUNT, ["a1"], deaf, fair=True),
        worker="w1",
        lease_seconds=600,
        settle=False,
        stop_seconds=0.5,
    )
    stop, thread = _start(loop)
    try:
        wait_for(lambda: loop.held() == ["a1"], "the account claimed")
        stop.set()
        thread.join(30)
        assert not thread.is_alive()
        assert SqlWorkLeases(engine).holders(LeaseKind.ACCOUNT) == {"a1": None}
        with engine.connect() as c:
            assert c.execute(sa.select(lease_workers.c.worker_id)).all() == []
    finally:
        go_on.set()
    wait_for(lambda: outcome, "the late work tried to write")
    assert outcome == ["refused"]
