"""The store contract runs on every backend: the embedded SQLite file and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from mailfathom.adapters.sql import migrate
from mailfathom.adapters.sql.conversation_store import SqlConversationStore
from mailfathom.adapters.sql.engine import create_store_engine, sqlite_url
from mailfathom.adapters.sql.sync_store import SqlSyncStore


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[sa.Engine]:
    if request.param == "sqlite":
        url = sqlite_url(tmp_path / "store.sqlite3")
    else:
        url = request.getfixturevalue("migrated_postgres_url")
    created = create_store_engine(url)
    migrate.upgrade(created)  # a copy of the migrated template on PostgreSQL: nothing to do
    yield created
    created.dispose()


@pytest.fixture
def store(engine: sa.Engine) -> SqlSyncStore:
    return SqlSyncStore(engine)


@pytest.fixture
def conversations(engine: sa.Engine) -> SqlConversationStore:
    return SqlConversationStore(engine)
