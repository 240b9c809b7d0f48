"""An erasure's scrub cuts the write-ahead log even while another connection keeps running
checkpoints (the engine's own checkpointer, woken by every commit): SQLite answers a
checkpoint busy at once while another runs, and a scrub that took that answer left the erased
row's earlier pages in the database file."""

from __future__ import annotations

import threading
import uuid
from pathlib import Path

import sqlalchemy as sa
import sqlean

from mailfathom.adapters.sql.engine import create_store_engine, sqlite_url
from mailfathom.adapters.sql.scrubbing import scrub, zeroing_transaction


def test_a_scrub_cuts_the_log_while_other_checkpoints_run(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    engine = create_store_engine(sqlite_url(path))
    stop = threading.Event()

    def checkpointing() -> None:
        other = sqlean.connect(str(path), isolation_level=None, check_same_thread=False)
        try:
            while not stop.is_set():
                other.execute("PRAGMA wal_checkpoint(PASSIVE)")
        finally:
            other.close()

    try:
        with engine.begin() as c:
            c.exec_driver_sql("CREATE TABLE book (note TEXT)")
        thread = threading.Thread(target=checkpointing, daemon=True)
        thread.start()
        for _ in range(40):
            marker = "erased-note-" + uuid.uuid4().hex
            with zeroing_transaction(engine) as c:
                c.execute(sa.text("INSERT INTO book VALUES (:n)"), {"n": marker * 40})
            with zeroing_transaction(engine) as c:
                c.exec_driver_sql("DELETE FROM book")
            scrub(engine, ["book"])
            log = Path(f"{path}-wal")
            assert not log.exists() or log.stat().st_size == 0
            assert marker.encode() not in path.read_bytes()
    finally:
        stop.set()
        engine.dispose()
