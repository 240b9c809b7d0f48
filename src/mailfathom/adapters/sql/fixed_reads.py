"""The read path's fixed statements, run on PostgreSQL below SQLAlchemy's execution layer.

A statement built once (a module's constant) has nothing left for SQLAlchemy to do per call
but its bookkeeping: the compiled cache's key, an execution context, the result's metadata
and a row object per row. On PostgreSQL that is about as much of the process's time as the
driver's own work for a page of rows. `rows` compiles such a statement once per dialect and
hands its text and values to the driver's cursor, then reads every row at once.

What SQLAlchemy would still have done is done here too: the statement's bound constants and
each value's bind processor, each column's result processor, the engine's
`before_cursor_execute` and `after_cursor_execute` events (the fence check and the tests'
statement watchers see these statements as they see any other), and a driver error raised
as SQLAlchemy's own, the connection invalidated when the error says it was lost, and every
other connection the engine keeps retired with it.

SQLite, and a statement whose text depends on its values (an expanding list, a value
rendered into the text), run through SQLAlchemy as before.
"""

from __future__ import annotations

import threading
from collections import namedtuple
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Dialect
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.selectable import SelectBase

_Processor = Callable[[Any], Any] | None


@dataclass(slots=True)
class _Prepared:
    """A statement compiled for one dialect, with what each execution needs. Its columns'
    result processors are known from the first answer, whose column types they may need."""

    compiled: SQLCompiler
    text: str
    binds: tuple[tuple[str, Callable[[Any], Any]], ...]
    types: tuple[sa.types.TypeEngine[Any], ...]
    row: type[tuple[Any, ...]]
    results: tuple[_Processor, ...] | None = None


_lock = threading.Lock()
# By the statement's identity and its dialect's name; the statement is kept with it, so an
# identity is never reused while it is cached. Only statements built once come here.
_prepared: dict[tuple[int, str], tuple[sa.Executable, _Prepared | None]] = {}


def rows(
    connection: sa.Connection, statement: sa.Executable, values: Mapping[str, Any]
) -> Sequence[Any]:
    """Every row of `statement` (built once, never per call) with `values` bound, each
    read by position and by column name, as SQLAlchemy's rows are."""
    prepared = _prepare(connection.dialect, statement)
    if prepared is None:
        return connection.execute(statement, values).all()
    return _run(connection, prepared, values)


def scalars(
    connection: sa.Connection, statement: sa.Executable, values: Mapping[str, Any]
) -> list[Any]:
    """The first column of every row of `statement`."""
    return [row[0] for row in rows(connection, statement, values)]


def _prepare(dialect: Dialect, statement: sa.Executable) -> _Prepared | None:
    key = (id(statement), dialect.name)
    found = _prepared.get(key)
    if found is not None and found[0] is statement:
        return found[1]
    made = _compiled(dialect, statement) if dialect.name == "postgresql" else None
    with _lock:
        _prepared[key] = (statement, made)
    return made


def _compiled(dialect: Dialect, statement: sa.Executable) -> _Prepared | None:
    if not isinstance(statement, SelectBase):
        return None  # only reads come here
    compiled = statement.compile(dialect=dialect)
    if not isinstance(compiled, SQLCompiler):
        return None
    if compiled.literal_execute_params or compiled.post_compile_params:
        return None  # the text would depend on the values
    if compiled.escaped_bind_names:
        return None  # names the driver is given differ from the statement's
    processors = compiled._bind_processors  # what execution applies
    binds: list[tuple[str, Callable[[Any], Any]]] = []
    for name, processor in processors.items():
        if processor is None:
            continue
        if not callable(processor):
            return None  # a processor for each part of a tuple: left to SQLAlchemy
        binds.append((name, processor))
    columns = compiled._result_columns  # the statement's own columns
    names = [str(column[0]) for column in columns]
    row = namedtuple("Row", names, rename=True)  # type: ignore[misc]
    types = tuple(column[3] for column in columns)
    return _Prepared(compiled, compiled.string, tuple(binds), types, row)


def _results(
    dialect: Dialect, prepared: _Prepared, description: Sequence[Any]
) -> tuple[_Processor, ...]:
    """Each column's result processor for the column types the database answered with."""
    if len(description) != len(prepared.types):
        raise RuntimeError("a fixed read answered other columns than it names")
    return tuple(
        kind.dialect_impl(dialect).result_processor(dialect, column[1])
        for kind, column in zip(prepared.types, description, strict=True)
    )


def _run(connection: sa.Connection, prepared: _Prepared, values: Mapping[str, Any]) -> list[Any]:
    bound = prepared.compiled.construct_params(values)
    for name, processor in prepared.binds:
        if name in bound:
            bound[name] = processor(bound[name])
    fairy = connection.connection
    cursor = fairy.cursor()
    text = prepared.text
    try:
        if not connection.in_transaction():
            connection.begin()
        connection.dispatch.before_cursor_execute(connection, cursor, text, bound, None, False)
        cursor.execute(text, bound)
        found = cursor.fetchall()
        if prepared.results is None:
            prepared.results = _results(connection.dialect, prepared, cursor.description)
        connection.dispatch.after_cursor_execute(connection, cursor, text, bound, None, False)
    except connection.dialect.loaded_dbapi.Error as error:
        lost = connection.dialect.is_disconnect(error, fairy.dbapi_connection, cursor)
        if lost:
            connection.invalidate(error)
            # The others the engine keeps are as lost (a restarted database): a new pool
            # takes their place, as SQLAlchemy's own execution retires them on a loss.
            connection.engine.dispose(close=False)
        raise sa.exc.DBAPIError.instance(
            text,
            bound,
            error,
            connection.dialect.loaded_dbapi.Error,
            hide_parameters=True,
            dialect=connection.dialect,
            connection_invalidated=lost,
        ) from error
    finally:
        cursor.close()
    make = prepared.row._make  # type: ignore[attr-defined]
    processors = prepared.results or ()
    active = [(i, p) for i, p in enumerate(processors) if p is not None]
    if not active:
        return [make(row) for row in found]
    made: list[Any] = []
    for row in found:
        cells = list(row)
        for i, processor in active:
            cells[i] = processor(cells[i])
        made.append(make(cells))
    return made
