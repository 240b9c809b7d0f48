"""A statement that fails never carries the values it was given into its error's text.

SQLAlchemy writes a failed statement's bound values into the error it raises (`[parameters:
...]`); a handler or a server that logs that error would then log a draft's subject, a
recipient or a body. The store's engines hide them, on both stores, whatever the failure."""

from __future__ import annotations

import uuid
from collections.abc import Mapping

import pytest
import sqlalchemy as sa

from mailfathom.adapters.sql.schema import console_tool_calls


def _failed(engine: sa.Engine, statement: sa.Executable, values: Mapping[str, object]) -> str:
    with pytest.raises(sa.exc.DBAPIError) as raised, engine.begin() as connection:
        connection.execute(statement, values)
    return str(raised.value)


def test_a_failed_statement_keeps_its_values_out_of_the_error(engine: sa.Engine) -> None:
    marker = "secret-subject-" + uuid.uuid4().hex
    missing = sa.text("INSERT INTO no_such_table (subject) VALUES (:subject)")
    assert marker not in _failed(engine, missing, {"subject": marker})
    # A constraint broken by a real table's row: a NOT NULL column left empty.
    broken = console_tool_calls.insert()
    row = {"called_at": None, "tool": marker, "outcome": marker, "duration_us": 1}
    assert marker not in _failed(engine, broken, row)
