"""The clock processes sharing a store agree on: PostgreSQL's, so that a lease one machine
sets is judged expired by another at the same instant whatever their own clocks say. On
SQLite one machine shares the store, and its clock serves."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import sqlalchemy as sa


def store_now(engine: sa.Engine, clock: Callable[[], datetime]) -> datetime:
    """PostgreSQL's time for `engine`'s database; `clock` on SQLite."""
    if engine.dialect.name != "postgresql":
        return clock()
    with engine.connect() as c:
        stamp: datetime = c.execute(sa.select(sa.func.now())).scalar_one()
    return stamp.astimezone(UTC)
