"""Driver values for bulk inserts: the same as converting each value on its own."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from mailfathom.adapters.sql import bulk


def test_repeated_objects_are_converted_once_and_every_value_as_if_alone() -> None:
    calls: list[Any] = []

    def stamp(value: datetime) -> str:
        calls.append(value)
        return value.isoformat()

    def flag(value: bool) -> int:
        calls.append(value)
        return int(value)

    shared = datetime(2026, 5, 1, tzinfo=UTC)
    rows = [
        (n, shared, shared + timedelta(seconds=n + 1), n % 2 == 0, None if n == 3 else "x")
        for n in range(6)
    ]
    processors: list[bulk.Converter] = [None, stamp, stamp, flag, str.upper]
    expected = [
        tuple(
            value if process is None or value is None else process(value)
            for process, value in zip(processors, row, strict=True)
        )
        for row in rows
    ]
    calls.clear()
    assert bulk.driver_rows(processors, rows) == expected
    # One conversion of the shared timestamp, six of the distinct ones, and the booleans
    # converted again only when they change from one row to the next.
    assert calls.count(shared) == 1
    assert sum(1 for c in calls if isinstance(c, bool)) == 6
