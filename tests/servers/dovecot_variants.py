"""Dovecot announcing fewer extensions than it has (its `imap_capability` setting), each
variant checked by CAPABILITY before use."""

from __future__ import annotations

import imaplib
import uuid
from collections.abc import Iterator

from .dovecot import DovecotServer, ImapAccount


def capabilities(account: ImapAccount) -> list[str]:
    conn = imaplib.IMAP4(account.host, account.port)
    try:
        conn.login(account.username, account.password)
        typ, data = conn.capability()
        assert typ == "OK"
        return list(str(data[-1].decode()).split())
    finally:
        conn.logout()


def dovecot_without(dovecot: DovecotServer, *names: str) -> Iterator[DovecotServer]:
    """A second server like `dovecot` that does not announce the capabilities `names`."""
    suffix = uuid.uuid4().hex[:8]
    full = capabilities(dovecot.add_user(f"caps-{suffix}", f"pw-{suffix}"))
    assert set(names) <= set(full)
    server = DovecotServer(imap_capability=" ".join(c for c in full if c not in names)).start()
    try:
        announced = capabilities(server.add_user(f"check-{suffix}", f"pw-{suffix}"))
        assert not set(names) & set(announced)
        assert "IMAP4rev1" in announced
        yield server
    finally:
        server.stop()
