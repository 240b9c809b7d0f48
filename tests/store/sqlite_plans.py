"""SQLite's own plans for the statements a piece of store code runs: which statements it
sends (`statements_of`), then how SQLite would run each (`plan_steps`)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa

Sent = list[tuple[str, Any]]


@contextmanager
def statements_of(engine: sa.Engine, pattern: str | re.Pattern[str]) -> Iterator[Sent]:
    """The statements `engine` sends within the block whose text `pattern` finds, each with
    its parameters, in the order sent."""
    wanted = re.compile(pattern) if isinstance(pattern, str) else pattern
    seen: Sent = []

    def keep(_c: Any, _cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        if wanted.search(statement):
            seen.append((statement, parameters))

    sa.event.listen(engine, "before_cursor_execute", keep)
    try:
        yield seen
    finally:
        sa.event.remove(engine, "before_cursor_execute", keep)


def plan_steps(engine: sa.Engine, sent: Sequence[tuple[str, Any]]) -> list[list[str]]:
    """Each statement's plan as SQLite chooses it now, one line per step (the detail column
    of `EXPLAIN QUERY PLAN`)."""
    with engine.connect() as connection:
        raw = connection.connection.driver_connection
        assert raw is not None
        return [
            [str(row[3]) for row in raw.execute(f"EXPLAIN QUERY PLAN {statement}", parameters)]
            for statement, parameters in sent
        ]
