"""Reads of one pack store do not wait for each other nor for a writer of the same process:
a writer that waits for the index (another process is committing to it) leaves every reader
of the process free."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from mailfathom.adapters.content.packs import PackContentStore
from mailfathom.adapters.content.texts import encode_text

# A bound on waiting for what should happen at once, so that a regression fails the test
# instead of hanging it; nothing is measured against it.
_PATIENCE_SECONDS = 30.0


def _pack_octets(root: Path) -> int:
    return sum(path.stat().st_size for path in (root / "packs").glob("*.pack"))


def test_a_read_does_not_wait_for_a_writer_waiting_for_the_index(tmp_path: Path) -> None:
    store = PackContentStore(tmp_path)
    [held] = store.write_many([b"Subject: held\r\n\r\nbody\r\n"], [encode_text("held", None)[0]])
    other_process = sqlite3.connect(tmp_path / "index.sqlite3", isolation_level=None)
    other_process.execute("BEGIN IMMEDIATE")
    before = _pack_octets(tmp_path)
    writer = threading.Thread(
        target=store.write_many,
        args=([b"Subject: new\r\n\r\nnew\r\n"], [encode_text("new", None)[0]]),
    )
    writer.start()
    try:
        while _pack_octets(tmp_path) == before:  # appended: now waiting to index it
            writer.join(0.01)
            assert writer.is_alive()
        read: list[object] = []
        reader = threading.Thread(
            target=lambda: read.extend([store.get_text(held), store.get(held), store.exists(held)])
        )
        reader.start()
        reader.join(_PATIENCE_SECONDS)
        assert read == [("held", None), b"Subject: held\r\n\r\nbody\r\n", True]
        assert writer.is_alive()
    finally:
        other_process.execute("ROLLBACK")
        other_process.close()
        writer.join()
    store.close()
