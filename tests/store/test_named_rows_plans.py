"""Statements naming messages by `seq` within folders read the named rows, not the folders.

A search reads its rankings three pages deep (60 rows for a page of 20) and then asks which
of those rows lie in the scope, which other folders hold a copy of each, and their texts.
Without statistics (the store never runs ANALYZE) SQLite reads such a statement from the
index on `folder_id` once more than a few dozen rows are named: every row of the folders,
200 ms at 100,000 messages (bench/hybrid_search.py), where reading the named rows by their
key takes a fraction of a millisecond. The plan is SQLite's own choice, so this is asked of
SQLite; PostgreSQL chooses by its statistics.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from mailfathom.adapters.sql import migrate
from mailfathom.adapters.sql.engine import create_store_engine, sqlite_url
from mailfathom.adapters.sql.message_copies import other_folders
from mailfathom.adapters.sql.reading import SqlMailboxReader
from mailfathom.adapters.sql.reading_rows import named_folder
from mailfathom.adapters.sql.reading_texts import indexed_texts_in
from mailfathom.adapters.sql.schema import messages
from mailfathom.adapters.sql.sync_store import SqlSyncStore
from mailfathom.adapters.sql.vector_reading import _passing
from mailfathom.app.shared.stored_mail import SummaryFilter
from store.sqlite_plans import plan_steps, statements_of

from .reading_builders import add_folder

NAMED = list(range(1, 61))
_ROW_KEYS = ("INTEGER PRIMARY KEY", "uq_messages_account_seq (account_id=? AND seq=?")
FOLDERS: list[int] = []


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[sa.Engine]:
    created = create_store_engine(sqlite_url(tmp_path / "store.sqlite3"))
    migrate.upgrade(created)
    store = SqlSyncStore(created)
    FOLDERS[:] = [add_folder(store, name).folder_id for name in ("INBOX", "Archive", "Sent")]
    try:
        yield created
    finally:
        created.dispose()


def _plans(engine: sa.Engine, read: Any) -> list[list[str]]:
    """The plan of each statement `read(connection)` runs naming rows by `seq`."""
    with engine.connect() as connection, statements_of(engine, "seq IN") as seen:
        read(connection)
    return plan_steps(engine, seen)


def _by_named_rows(plans: list[list[str]]) -> None:
    """Each plan starts from the named rows' key: `seq`, or `(account_id, seq)` when the
    statement names their account."""
    assert plans
    for plan in plans:
        assert any(key in plan[0] for key in _ROW_KEYS), plan
        assert not any("(folder_id=?)" in line for line in plan), plan


def test_other_folders_reads_the_named_rows(engine: sa.Engine) -> None:
    ranks = {folder: place for place, folder in enumerate(FOLDERS)}
    aliases = {folder: f"f{folder}" for folder in FOLDERS}
    _by_named_rows(_plans(engine, lambda c: other_folders(c, NAMED, ranks, aliases, ["acct"])))


def test_texts_and_nearest_check_read_the_named_rows(engine: sa.Engine) -> None:
    _by_named_rows(_plans(engine, lambda c: indexed_texts_in(c, NAMED, FOLDERS, ["acct"], None)))
    in_scope = [
        messages.c.account_id.in_(["acct"]),
        named_folder(messages.c.folder_id).in_(FOLDERS),
    ]
    _by_named_rows(_plans(engine, lambda c: _passing(c, NAMED, in_scope, ())))


def test_summaries_of_reads_the_named_rows(engine: sa.Engine) -> None:
    reader = SqlMailboxReader(engine)

    def read(_connection: sa.Connection) -> None:
        with reader.snapshot() as view:
            view.summaries_of(NAMED, SummaryFilter(folder_ids=tuple(FOLDERS)))

    _by_named_rows(_plans(engine, read))
