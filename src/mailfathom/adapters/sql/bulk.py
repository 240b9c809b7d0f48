"""Inserting many plain rows with the driver's own `executemany`.

The child rows of a batch (participants, identifiers, parts, bodies, keywords, index
documents) carry only strings, integers and booleans, which both drivers accept as they are,
so they skip SQLAlchemy's per-row parameter processing: on an initial synchronization that
processing cost more than the inserts themselves.
"""

from __future__ import annotations

from collections.abc import Sequence
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
) -> None:
    """INSERT `rows` (tuples in `columns` order) into `table` in one driver call."""
    if not rows:
        return
    marks = ", ".join([placeholder(connection)] * len(columns))
    statement = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})"
    connection.exec_driver_sql(statement, list(rows))
