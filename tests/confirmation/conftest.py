"""Fixtures of the confirmation tests: a migrated store on each backend."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from mailfathom.adapters.sql import migrate
from mailfathom.adapters.sql.engine import create_store_engine, sqlite_url


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[sa.Engine]:
    if request.param == "sqlite":
        url = sqlite_url(tmp_path / "store.sqlite3")
    else:
        url = request.getfixturevalue("migrated_postgres_url")
    created = create_store_engine(url)
    migrate.upgrade(created)
    yield created
    created.dispose()
