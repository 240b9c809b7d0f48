"""Inserting many plain rows with the driver's own `executemany`.

The rows of a batch are turned into driver values once, column by column, with the same
conversions SQLAlchemy would apply (UUIDs, timestamps and booleans differ between the two
databases), and handed to the driver in one call: on an initial synchronization SQLAlchemy's
per-row parameter processing cost more than the inserts themselves.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import sqlalchemy as sa


def placeholder(connection: sa.Connection) -> str:
    """The positional parameter marker of the connection's driver."""
    return "%s" if connection.dialect.name == "postgresql" else "?"


def insert_rows(
    connection: sa.Connection,
    table: str,
    columns: Sequence[str],
    rows: Sequence[tuple[Any, ...]],
    *,
    suffix: str = "",
) -> None:
    """INSERT `rows` (tuples of driver values in `columns` order) into `table` in one call."""
    if not rows:
        return
    marks = ", ".join([placeholder(connection)] * len(columns))
    statement = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks}){suffix}"
    connection.exec_driver_sql(statement, list(rows))


Converter = Callable[[Any], Any] | None


def converters(
    connection: sa.Connection, table: sa.Table, columns: Sequence[str]
) -> list[Converter]:
    """For each column, the function SQLAlchemy applies to a value before the driver sees it
    (None where the value passes unchanged)."""
    dialect = connection.dialect
    found: list[Converter] = []
    for name in columns:
        column_type = table.c[name].type
        found.append(column_type.dialect_impl(dialect).bind_processor(dialect))
    return found


def driver_rows(
    processors: Sequence[Converter], rows: Sequence[tuple[Any, ...]]
) -> list[tuple[Any, ...]]:
    """Rows converted with `processors` (see `converters`), value by value.

    A value that is the very object the previous row held in that column (a batch's common
    timestamp, True and False) is converted once."""
    active = [(i, p) for i, p in enumerate(processors) if p is not None]
    if not active:
        return list(rows)
    last: dict[int, tuple[Any, Any]] = {}
    converted: list[tuple[Any, ...]] = []
    for row in rows:
        values = list(row)
        for index, process in active:
            value = values[index]
            if value is None:
                continue
            previous = last.get(index)
            if previous is not None and previous[0] is value:
                values[index] = previous[1]
            else:
                values[index] = done = process(value)
                last[index] = (value, done)
        converted.append(tuple(values))
    return converted
