"""Fixtures shared by the synchronization tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mailfathom.adapters.imap.session import ImapSession
from servers.dovecot import ImapAccount

from .helpers import RemoteMailbox


@pytest.fixture
def body_fetches(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """UIDs whose bodies the synchronizer asked the server for."""
    seen: list[int] = []
    original = ImapSession.fetch_bodies

    def counting(self: ImapSession, uids: list[int]):  # type: ignore[no-untyped-def]
        seen.extend(uids)
        return original(self, uids)

    monkeypatch.setattr(ImapSession, "fetch_bodies", counting)
    return seen


@pytest.fixture
def remote(imap_account: ImapAccount) -> Iterator[RemoteMailbox]:
    """A second IMAP client acting behind the synchronizer's back."""
    mailbox = RemoteMailbox(imap_account)
    yield mailbox
    mailbox.close()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest) -> str | None:
    """None (the SQLite default) or a migrated PostgreSQL database's address."""
    if request.param == "sqlite":
        return None
    return str(request.getfixturevalue("migrated_postgres_url"))
