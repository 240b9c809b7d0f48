"""Connections opening one new SQLite file at the same moment all open it.

Each connection asks for the write-ahead log as it opens. On a file still in rollback mode
two connections asking at once can each hold a shared lock and want an exclusive one; SQLite
answers one of them SQLITE_BUSY at once, without waiting out the busy timeout, since waiting
could never end. A process starting beside another (`serve` beside `sync`, workers of one
deployment) met that as "database is locked".
"""

from __future__ import annotations

import threading
from pathlib import Path

from mailfathom.adapters.sql.engine import create_store_engine, sqlite_url

ROUNDS = 60
OPENERS = 8


def _open_together(url: str) -> list[str]:
    ready = threading.Barrier(OPENERS)
    failures: list[str] = []

    def open_one() -> None:
        engine = create_store_engine(url)
        try:
            ready.wait(30)
            with engine.connect() as connection:
                mode = connection.exec_driver_sql("PRAGMA journal_mode").scalar_one()
                if mode != "wal":
                    failures.append(f"journal mode {mode}")
        except Exception as failure:
            failures.append(type(failure).__name__ + ": " + str(failure).splitlines()[0])
        finally:
            engine.dispose()

    openers = [threading.Thread(target=open_one) for _ in range(OPENERS)]
    for opener in openers:
        opener.start()
    for opener in openers:
        opener.join(60)
    assert not any(opener.is_alive() for opener in openers)
    return failures


def test_connections_opening_a_new_file_at_once_all_open_it_in_wal_mode(
    tmp_path: Path,
) -> None:
    failed_rounds = {}
    for round_number in range(ROUNDS):
        failures = _open_together(sqlite_url(tmp_path / f"store-{round_number}.sqlite3"))
        if failures:
            failed_rounds[round_number] = failures
    assert failed_rounds == {}
