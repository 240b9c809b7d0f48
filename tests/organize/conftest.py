"""Servers of the organizing tests: Dovecot as it comes, and Dovecot without MOVE, or without
both MOVE and UIDPLUS (Dovecot's `imap_capability` setting), each checked by CAPABILITY."""

from __future__ import annotations

import imaplib
import uuid
from collections.abc import Iterator

import pytest

from servers.dovecot import DovecotServer, ImapAccount


def _capabilities(account: ImapAccount) -> list[str]:
    conn = imaplib.IMAP4(account.host, account.port)
    try:
        conn.login(account.username, account.password)
        typ, data = conn.capability()
        assert typ == "OK"
        return list(str(data[-1].decode()).split())
    finally:
        conn.logout()


def _without(dovecot: DovecotServer, *names: str) -> Iterator[DovecotServer]:
    suffix = uuid.uuid4().hex[:8]
    full = _capabilities(dovecot.add_user(f"caps-{suffix}", f"pw-{suffix}"))
    assert set(names) <= set(full)
    server = DovecotServer(imap_capability=" ".join(c for c in full if c not in names)).start()
    try:
        announced = _capabilities(server.add_user(f"check-{suffix}", f"pw-{suffix}"))
        assert not set(names) & set(announced)
        assert "IMAP4rev1" in announced
        yield server
    finally:
        server.stop()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest) -> str | None:
    """The store a test's deployment keeps: the embedded SQLite file (None), or a fresh
    PostgreSQL database at the newest schema."""
    if request.param == "sqlite":
        return None
    return str(request.getfixturevalue("migrated_postgres_url"))


@pytest.fixture(scope="module")
def dovecot_without_move(dovecot: DovecotServer) -> Iterator[DovecotServer]:
    yield from _without(dovecot, "MOVE")


@pytest.fixture(scope="module")
def dovecot_without_move_or_uidplus(dovecot: DovecotServer) -> Iterator[DovecotServer]:
    yield from _without(dovecot, "MOVE", "UIDPLUS")
