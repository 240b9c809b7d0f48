"""`StoreClock`: the store's time read without a round trip. On PostgreSQL it is the
database's clock however far this machine's runs off, and it follows this machine's clock
between measurements; on SQLite (one machine) it is this machine's clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import sqlalchemy as sa

from mailfathom.adapters.sql.store_clock import StoreClock, store_now

NEAR = timedelta(seconds=5)


class MachineClock:
    """A machine's own clock, `skew` off the real time, that a test can step."""

    def __init__(self, skew: timedelta) -> None:
        self.skew = skew

    def __call__(self) -> datetime:
        return datetime.now(UTC) + self.skew


def _statements(engine: sa.Engine) -> list[str]:
    seen: list[str] = []
    sa.event.listen(engine, "before_cursor_execute", lambda *args: seen.append(str(args[2])))
    return seen


def test_the_store_clock_is_postgresqls_however_far_this_machines_runs_off(
    postgres_engine: sa.Engine,
) -> None:
    for skew in (timedelta(hours=1), timedelta(hours=-1), timedelta(0)):
        machine = MachineClock(skew)
        clock = StoreClock(postgres_engine, machine)
        clock.measure()
        assert abs(clock() - store_now(postgres_engine, machine)) < NEAR


def test_the_store_clock_answers_without_a_round_trip_and_follows_a_step_once_measured(
    postgres_engine: sa.Engine,
) -> None:
    machine = MachineClock(timedelta(hours=1))
    clock = StoreClock(postgres_engine, machine)
    clock.measure()
    statements = _statements(postgres_engine)
    first = clock()
    machine.skew += timedelta(minutes=30)
    stepped = clock()
    assert statements == []
    assert stepped - first >= timedelta(minutes=30)
    clock.measure()
    assert len(statements) >= 1
    assert abs(clock() - store_now(postgres_engine, machine)) < NEAR


def test_the_store_clock_is_this_machines_where_the_store_is_one_machines(
    engine: sa.Engine,
) -> None:
    """On SQLite, nothing is asked of the store; on PostgreSQL, only `measure` asks."""
    machine = MachineClock(timedelta(hours=1))
    clock = StoreClock(engine, machine)
    statements = _statements(engine)
    assert abs(clock() - machine()) < NEAR
    clock.measure()
    assert bool(statements) == (engine.dialect.name == "postgresql")
    assert abs(clock() - store_now(engine, machine)) < NEAR
