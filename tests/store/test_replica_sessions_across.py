"""Two replicas' views of one store (`Replicas`, on SQLite and PostgreSQL): a session in use
on one replica (a call held open past the idle period) is alive for the other, an idle one
expires for both and frees its caller's place, and a closed one is gone for both."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import anyio
import sqlalchemy as sa

from mailfathom.adapters.sql.replicas import SqlSharedQuestions, SqlSharedSessions
from mailfathom.adapters.sql.store_clock import StoreClock
from mailfathom.entrypoints.mcp.replica_state import Replicas

T0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
IDLE = 0.6
PARAMS = (
    '{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}'
)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)

    def measure(self) -> None:
        """Both replicas of a test read this one clock: there is nothing to measure."""


def _replica(engine: sa.Engine, clock: Clock) -> Replicas:
    return Replicas(
        SqlSharedSessions(engine),
        SqlSharedQuestions(engine),
        idle_seconds=IDLE,
        question_seconds=60,
        clock=clock,
    )


def _pair(engine: sa.Engine, clock: Clock) -> tuple[Replicas, Replicas]:
    return _replica(engine, clock), _replica(engine, clock)


def test_a_session_in_use_on_one_replica_stays_alive_for_the_other(engine: sa.Engine) -> None:
    clock = Clock()
    a, b = _pair(engine, clock)

    async def run() -> None:
        reservation = await a.reserve("agent", 1)
        assert reservation is not None
        await a.describe(reservation, "s1", None, "2025-11-25", PARAMS)
        await a.enter("s1")
        clock.advance(10 * IDLE)
        assert await b.find("s1") is None
        async with anyio.create_task_group() as group:
            group.start_soon(a.keep_alive)
            with anyio.fail_after(30):
                while await b.find("s1") is None:
                    await anyio.sleep(0.05)
            group.cancel_scope.cancel()
        assert await b.reserve("agent", 1) is None
        await a.leave("s1", closed=False)
        clock.advance(IDLE)
        assert await b.find("s1") is None
        assert await b.reserve("agent", 1) is not None

    anyio.run(run)


def test_a_session_closed_on_one_replica_is_gone_for_the_other(engine: sa.Engine) -> None:
    clock = Clock()
    a, b = _pair(engine, clock)

    async def run() -> None:
        reservation = await a.reserve("agent", 1)
        assert reservation is not None
        await a.describe(reservation, "s1", None, "2025-11-25", PARAMS)
        found = await b.find("s1")
        assert found is not None
        assert (found.caller, found.client_params) == ("agent", PARAMS)
        await b.enter("s1")
        await b.leave("s1", closed=True)
        assert await a.find("s1") is None
        assert await a.reserve("agent", 1) is not None

    anyio.run(run)


def _local(skew: timedelta) -> Callable[[], datetime]:
    """A machine's own clock, `skew` off the real time."""
    return lambda: datetime.now(UTC) + skew


def _on_machine(engine: sa.Engine, idle: float, skew: timedelta) -> Replicas:
    """A replica on a machine whose clock is `skew` off, as `serve` makes it."""
    clock = StoreClock(engine, _local(skew))
    clock.measure()
    return Replicas(
        SqlSharedSessions(engine),
        SqlSharedQuestions(engine),
        idle_seconds=idle,
        question_seconds=60,
        clock=clock,
    )


def test_a_replica_whose_clock_runs_ahead_keeps_the_others_sessions(
    postgres_engine: sa.Engine,
) -> None:
    """Its own clock past the idle period ahead, a replica still finds the session another
    keeps in use, and counts it in the caller's bound instead of clearing it."""
    idle = 30.0
    a = _on_machine(postgres_engine, idle, timedelta(0))
    b = _on_machine(postgres_engine, idle, timedelta(seconds=10 * idle))

    async def run() -> None:
        reservation = await a.reserve("agent", 1)
        assert reservation is not None
        await a.describe(reservation, "s1", None, "2025-11-25", PARAMS)
        await a.enter("s1")
        assert await b.find("s1") is not None
        assert await b.reserve("agent", 1) is None
        assert await b.retry_after("agent") <= idle + 1
        assert await a.find("s1") is not None

    anyio.run(run)


def test_a_replica_whose_clock_runs_behind_lets_idle_sessions_go(
    postgres_engine: sa.Engine,
) -> None:
    """Its own clock past the idle period behind, a replica takes a session nobody used for
    the idle period as gone, as every other replica does, and frees the caller's place."""
    idle = 0.5
    a = _on_machine(postgres_engine, idle, timedelta(0))
    b = _on_machine(postgres_engine, idle, timedelta(seconds=-100 * idle))

    async def run() -> None:
        reservation = await a.reserve("agent", 1)
        assert reservation is not None
        await a.describe(reservation, "s1", None, "2025-11-25", PARAMS)
        with anyio.fail_after(30):
            while await a.find("s1") is not None:
                await anyio.sleep(0.05)
        await anyio.sleep(0.2)
        assert await b.find("s1") is None
        assert await b.reserve("agent", 1) is not None

    anyio.run(run)
