"""The pack readers of a store being closed: a lookup or read in flight across `close` keeps
nothing open behind it, and one begun after it is refused with the store's own error."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from mailfathom.adapters.content.pack_reading import PackReaders
from mailfathom.domain.errors import StoreError


def test_a_lookup_in_flight_across_close_leaves_no_connection_open(tmp_path: Path) -> None:
    index = tmp_path / "index.sqlite3"
    with sqlite3.connect(index) as made:
        made.execute("CREATE TABLE entries (key TEXT PRIMARY KEY)")
    entered, go_on = threading.Event(), threading.Event()
    opened: list[sqlite3.Connection] = []

    def connect() -> sqlite3.Connection:
        entered.set()
        go_on.wait(30)
        connection = sqlite3.connect(index, check_same_thread=False)
        opened.append(connection)
        return connection

    readers = PackReaders(4, connect)
    outcome: list[object] = []

    def look() -> None:
        try:
            outcome.append(readers.lookup("SELECT key FROM entries WHERE key = ?", ("k",)))
        except StoreError as error:
            outcome.append(error)

    thread = threading.Thread(target=look)
    thread.start()
    assert entered.wait(30)
    readers.close()
    go_on.set()
    thread.join(30)
    assert len(outcome) == 1
    (connection,) = opened
    with pytest.raises(sqlite3.ProgrammingError):
        connection.execute("SELECT 1")  # closed, not kept for a later lookup
    with pytest.raises(StoreError):
        readers.lookup("SELECT key FROM entries WHERE key = ?", ("k",))


def test_a_read_after_close_is_refused_and_keeps_no_descriptor(tmp_path: Path) -> None:
    pack = tmp_path / "one.pack"
    pack.write_bytes(b"octets")
    readers = PackReaders(4, lambda: sqlite3.connect(":memory:"))
    assert readers.read(pack, 0, 3) == b"oct"
    readers.close()
    with pytest.raises(StoreError):
        readers.read(pack, 0, 3)
