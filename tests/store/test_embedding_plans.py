"""The embedding backfill reads each account's messages by the account's key.

Each statement of the backfill names one account (its walk, its counts) and reads that
account's range of `uq_messages_account_seq`. SQLite keeps no statistics: offered the content
state beside the account it would walk `ix_messages_content_state`, every account's held mail
in `seq` order, to find one account's. The plans are SQLite's own choice, asked of SQLite;
PostgreSQL chooses by its statistics.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from fakes.embedder import FakeEmbedder
from mailfathom.adapters.sql import migrate
from mailfathom.adapters.sql.engine import create_store_engine, sqlite_url
from mailfathom.adapters.sql.passage_store import SqlPassageStore
from mailfathom.adapters.sql.sync_store import SqlSyncStore
from mailfathom.app.sync.embedding import StoredMailEmbedding
from store.sqlite_plans import plan_steps, statements_of

from .builders import inbox_and_junk, new_message, normalized

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
READS_MESSAGES = re.compile(r"^(?:SEARCH|SCAN) messages\b")
BY_KEY = (
    " INDEX uq_messages_account_seq (account_id=?",
    " INTEGER PRIMARY KEY (rowid=?)",
)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqlSyncStore]:
    engine = create_store_engine(sqlite_url(tmp_path / "store.sqlite3"))
    migrate.upgrade(engine)
    created = SqlSyncStore(engine)
    for account_id in ("alpha", "beta"):
        inbox, _ = inbox_and_junk(created, account_id)
        items = [
            new_message(uid, normalized(f"Note {uid}", message_id=f"{account_id}{uid}@x"))
            for uid in range(1, 6)
        ]
        created.add_messages(inbox, 3, items, NOW)
    try:
        yield created
    finally:
        engine.dispose()


def test_the_backfill_reads_each_account_s_messages_by_its_key(store: SqlSyncStore) -> None:
    embedder = FakeEmbedder()
    passages = SqlPassageStore(store.engine)
    with statements_of(store.engine, r"\bFROM messages\b") as seen:
        report = StoredMailEmbedding(passages, embedder, clock=lambda: NOW).run()
        assert report.messages == 10
        assert passages.is_filled(embedder.identity.generation)
    plans = plan_steps(store.engine, seen)
    steps = [step for plan in plans for step in plan if READS_MESSAGES.match(step)]
    assert len(steps) >= 5
    assert [s for s in steps if not any(key in s for key in BY_KEY)] == []
