"""On PostgreSQL the read side's statements stay prepared from one snapshot to the next.

The driver prepares a statement on a connection once it has come often enough, and forgets
every one it prepared when a transaction of that connection is rolled back. A snapshot only
reads, so it ends with a commit: rolled back, each call's statements were parsed and planned
again, since none ever came often enough within one snapshot.

A search's lexical statements are planned for the words they are given, prepared or not: a
plan made for any words (a generic plan) reads every match's document to rank it."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from mailfathom.adapters.sql.engine import create_store_engine
from mailfathom.adapters.sql.reading import SqlMailboxReader
from mailfathom.adapters.sql.sync_store import SqlSyncStore
from mailfathom.app.shared.stored_mail import SummaryFilter

from .reading_builders import Mail, add_folder, at, store_mail

ACCOUNT = "acct-prepared"


def _reader(url: str) -> tuple[SqlMailboxReader, sa.Engine, int]:
    writer = create_store_engine(url)
    store = SqlSyncStore(writer)
    folder = add_folder(store, "INBOX", account_id=ACCOUNT)
    # A word of two messages in eight: one to rank by (a word of half of them or more
    # has no weight, and is not ranked).
    store_mail(
        store,
        folder,
        *(Mail(f"note {n}", received=at(n), body="heron" if n < 2 else "ibis") for n in range(8)),
    )
    writer.dispose()
    # One connection, so every snapshot meets the statements the last one prepared.
    engine = create_store_engine(url, read_only=True, connections=1)
    return SqlMailboxReader(engine), engine, folder.folder_id


def test_a_listing_s_statements_stay_prepared_across_snapshots(
    migrated_postgres_url: str,
) -> None:
    reader, engine, folder = _reader(migrated_postgres_url)
    try:
        for _ in range(8):
            with reader.snapshot() as view:
                page = view.summaries(
                    SummaryFilter(folder_ids=(folder,)), newest_first=True, after=None, limit=5
                )
                assert len(page) == 5
        with engine.connect() as connection:
            prepared = connection.exec_driver_sql(
                "SELECT count(*) FROM pg_prepared_statements"
            ).scalar_one()
        assert prepared > 0
    finally:
        engine.dispose()


def test_a_search_plans_its_lexical_statements_for_its_words(
    migrated_postgres_url: str,
) -> None:
    reader, engine, folder = _reader(migrated_postgres_url)
    modes: list[str] = []

    def after(conn: sa.Connection, *_: Any) -> None:
        if not modes or modes[-1] != "asked":
            return
        modes[-1] = "reading"
        modes[-1] = conn.exec_driver_sql("SHOW plan_cache_mode").scalar_one()

    def before(_c: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if "ts_rank" in statement:
            modes.append("asked")

    sa.event.listen(engine, "before_cursor_execute", before)
    sa.event.listen(engine, "after_cursor_execute", after)
    try:
        for _ in range(3):
            with reader.snapshot() as view:
                found = view.search(SummaryFilter(folder_ids=(folder,)), ["heron"], 5)
                assert len(found) == 2
    finally:
        sa.event.remove(engine, "before_cursor_execute", before)
        sa.event.remove(engine, "after_cursor_execute", after)
        engine.dispose()
    assert modes == ["force_custom_plan"] * 3
