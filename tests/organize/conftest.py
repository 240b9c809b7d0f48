"""Servers of the organizing tests: Dovecot as it comes, and Dovecot without MOVE, or without
both MOVE and UIDPLUS (Dovecot's `imap_capability` setting), each checked by CAPABILITY."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from servers.dovecot import DovecotServer
from servers.dovecot_variants import dovecot_without


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest) -> str | None:
    """The store a test's deployment keeps: the embedded SQLite file (None), or a fresh
    PostgreSQL database at the newest schema."""
    if request.param == "sqlite":
        return None
    return str(request.getfixturevalue("migrated_postgres_url"))


@pytest.fixture(scope="module")
def dovecot_without_move(dovecot: DovecotServer) -> Iterator[DovecotServer]:
    yield from dovecot_without(dovecot, "MOVE")


@pytest.fixture(scope="module")
def dovecot_without_move_or_uidplus(dovecot: DovecotServer) -> Iterator[DovecotServer]:
    yield from dovecot_without(dovecot, "MOVE", "UIDPLUS")
