"""Fixtures shared by the synchronization tests."""

from __future__ import annotations

import pytest

from mailfathom.adapters.imap.session import ImapSession


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
