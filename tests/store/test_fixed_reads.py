"""A fixed read statement run on the driver's cursor (`fixed_reads`) answers as SQLAlchemy's
execution would: the same rows with each column's result processor applied, the bound
constants of the statement sent, the engine's statement events fired, and a driver failure
raised as SQLAlchemy's error, without the values it was given."""

from __future__ import annotations

from datetime import UTC
from typing import Any

import pytest
import sqlalchemy as sa

from mailfathom.adapters.sql import fixed_reads
from mailfathom.adapters.sql.engine import create_store_engine
from mailfathom.adapters.sql.reading_rows import arrays, listed
from mailfathom.adapters.sql.schema import messages
from mailfathom.adapters.sql.sync_store import SqlSyncStore

from .reading_builders import Mail, add_folder, at, store_mail

ACCOUNT = "acct-fixed-reads"


def _statement(array: bool) -> sa.Select[Any]:
    return (
        sa.select(messages.c.seq, messages.c.received_at, messages.c.subject)
        .where(
            listed(array, messages.c.account_id, "accounts"),
            # A constant bound with the statement, which its execution must send too.
            messages.c.subject != sa.bindparam(None, "never a subject"),
        )
        .order_by(messages.c.seq)
    )


STATEMENTS = {array: _statement(array) for array in (False, True)}


def _stored(engine: sa.Engine) -> None:
    store = SqlSyncStore(engine)
    folder = add_folder(store, "INBOX", account_id=ACCOUNT)
    store_mail(store, folder, *(Mail(f"subject {n}", received=at(n)) for n in range(3)))


def test_a_fixed_read_answers_the_rows_sqlalchemy_answers(engine: sa.Engine) -> None:
    _stored(engine)
    with engine.connect() as connection:
        if connection.dialect.name == "postgresql":
            # Timestamps come back in the session's zone: the column's processor makes them UTC.
            connection.exec_driver_sql("SET TIME ZONE 'Asia/Kolkata'")
        statement = STATEMENTS[arrays(connection)]
        values = {"accounts": [ACCOUNT]}
        theirs = connection.execute(statement, values).all()
        ours = fixed_reads.rows(connection, statement, values)
        again = fixed_reads.rows(connection, statement, values)
        firsts = fixed_reads.scalars(connection, statement, values)
    assert [tuple(r) for r in ours] == [tuple(r) for r in theirs] == [tuple(r) for r in again]
    assert [r.subject for r in ours] == ["subject 0", "subject 1", "subject 2"]
    assert all(r.received_at.tzinfo is UTC for r in ours)
    assert firsts == [r.seq for r in theirs]


def test_a_fixed_read_fires_the_engines_statement_events(engine: sa.Engine) -> None:
    _stored(engine)
    seen: list[tuple[str, str]] = []

    def before(*args: Any) -> None:
        seen.append(("before", str(args[2])))

    def after(*args: Any) -> None:
        seen.append(("after", str(args[2])))

    sa.event.listen(engine, "before_cursor_execute", before)
    sa.event.listen(engine, "after_cursor_execute", after)
    try:
        with engine.connect() as connection:
            statement = STATEMENTS[arrays(connection)]
            fixed_reads.rows(connection, statement, {"accounts": [ACCOUNT]})
    finally:
        sa.event.remove(engine, "before_cursor_execute", before)
        sa.event.remove(engine, "after_cursor_execute", after)
    assert [kind for kind, text in seen if "FROM messages" in text] == ["before", "after"]


def test_a_lost_connection_is_sqlalchemys_error_and_names_no_value(
    postgres_engine: sa.Engine,
) -> None:
    _stored(postgres_engine)
    secret = "acct-not-to-be-told"
    with postgres_engine.connect() as connection:
        statement = STATEMENTS[True]
        fixed_reads.rows(connection, statement, {"accounts": [ACCOUNT]})
        pid = connection.exec_driver_sql("SELECT pg_backend_pid()").scalar_one()
        with postgres_engine.connect() as other:
            other.exec_driver_sql(f"SELECT pg_terminate_backend({int(pid)})")
        with pytest.raises(sa.exc.DBAPIError) as raised:
            fixed_reads.rows(connection, statement, {"accounts": [secret]})
    assert raised.value.connection_invalidated
    assert secret not in str(raised.value)
    # The engine goes on with a connection of its own.
    with postgres_engine.connect() as connection:
        assert fixed_reads.rows(connection, statement, {"accounts": [ACCOUNT]})


def test_a_statement_whose_text_depends_on_its_values_runs_through_sqlalchemy(
    postgres_engine: sa.Engine,
) -> None:
    _stored(postgres_engine)
    statement = (
        sa.select(messages.c.seq)
        .where(messages.c.account_id == ACCOUNT)
        .where(messages.c.seq.in_(sa.bindparam("seqs", expanding=True)))
    )
    with postgres_engine.connect() as connection:
        seqs = [
            r[0] for r in fixed_reads.rows(connection, STATEMENTS[True], {"accounts": [ACCOUNT]})
        ]
        assert fixed_reads.scalars(connection, statement, {"seqs": seqs[:2]}) == seqs[:2]
        assert fixed_reads.scalars(connection, statement, {"seqs": seqs}) == seqs


def test_a_lost_connection_drops_every_connection_the_engine_kept(
    migrated_postgres_url: str,
) -> None:
    # The read engine pings no connection it hands out: after a restart of the database
    # every kept connection is lost, so a lost one found must retire all of them, as
    # SQLAlchemy's own execution does, or the next snapshot is handed another lost one.
    engine = create_store_engine(migrated_postgres_url, read_only=True)
    try:
        _stored(engine)
        with engine.connect() as first, engine.connect() as second:
            pids = [
                c.exec_driver_sql("SELECT pg_backend_pid()").scalar_one() for c in (first, second)
            ]
        outside = sa.create_engine(migrated_postgres_url, poolclass=sa.pool.NullPool)
        with outside.connect() as other:
            for pid in pids:
                other.exec_driver_sql(f"SELECT pg_terminate_backend({int(pid)})")
        with engine.connect() as connection, pytest.raises(sa.exc.DBAPIError) as raised:
            fixed_reads.rows(connection, STATEMENTS[True], {"accounts": [ACCOUNT]})
        assert raised.value.connection_invalidated
        with engine.connect() as connection:
            assert fixed_reads.rows(connection, STATEMENTS[True], {"accounts": [ACCOUNT]})
    finally:
        engine.dispose()
