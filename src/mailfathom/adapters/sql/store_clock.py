"""The clock processes sharing a store agree on: PostgreSQL's, so that a lease one machine
sets is judged expired by another at the same instant whatever their own clocks say. On
SQLite one machine shares the store, and its clock serves.

`store_now` asks the database each time (a round trip); `StoreClock` asks it once in a
while (`measure`) and answers from this machine's clock and the offset it found, for what
reads the time on an event loop, on every request, where a round trip each time would not
do."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa


def _local_now() -> datetime:
    return datetime.now(UTC)


def store_now(engine: sa.Engine, clock: Callable[[], datetime]) -> datetime:
    """PostgreSQL's time for `engine`'s database; `clock` on SQLite."""
    if engine.dialect.name != "postgresql":
        return clock()
    with engine.connect() as c:
        stamp: datetime = c.execute(sa.select(sa.func.now())).scalar_one()
    return stamp.astimezone(UTC)


class StoreClock:
    """The store's time as this process reads it without a round trip: `local` (this
    machine's clock) plus the offset to PostgreSQL's clock last measured. Until measured,
    and on SQLite, the offset is nothing. The offset is off by at most half a round trip to
    the database, and follows a change of either clock at the next `measure`."""

    def __init__(self, engine: sa.Engine, local: Callable[[], datetime] = _local_now) -> None:
        self._engine = engine
        self._local = local
        self._offset = timedelta(0)
        self._measuring = threading.Lock()

    def __call__(self) -> datetime:
        return self._local() + self._offset

    def measure(self) -> None:
        """Read PostgreSQL's clock once and keep this machine's offset to it (blocking:
        run it in a worker thread, never on an event loop)."""
        if self._engine.dialect.name != "postgresql":
            return
        with self._measuring, self._engine.connect() as c:
            c.execute(sa.select(1))
            before = self._local()
            stamp: datetime = c.execute(sa.select(sa.func.clock_timestamp())).scalar_one()
            after = self._local()
        self._offset = stamp.astimezone(UTC) - (before + (after - before) / 2)
