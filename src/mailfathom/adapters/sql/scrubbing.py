"""Writes that leave no byte behind of what they drop: the contact book's erasures.

A deleted or overwritten row is not gone from a database's files. SQLite leaves a freed
page (an overflow page of a long note, an index page merged away) as it was unless
`secure_delete` is fully on, and keeps earlier versions of a page in its write-ahead log
until a checkpoint copies the log back and cuts it. PostgreSQL keeps a dead row version, its
TOAST chunks and its index entries until a vacuum, and even a vacuum only compacts a page,
leaving the bytes it freed where they were; rewriting the table (VACUUM FULL) is what writes
new files holding the live rows alone.

So a write of the book runs with `secure_delete=ON` on SQLite (every byte it frees is
zeroed), and one that dropped a person's data is followed, once committed, by `scrub`: on
SQLite a TRUNCATE checkpoint, on PostgreSQL a VACUUM FULL of the book's tables (their TOAST
and indexes rebuilt with them). PostgreSQL's own write-ahead log is the server's and is
outside what any table command reaches: what it keeps, and for how long, is in
docs/operations.md.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Sequence

import sqlalchemy as sa
import structlog

log = structlog.get_logger("mailfathom.store")


@contextlib.contextmanager
def zeroing_transaction(engine: sa.Engine) -> Iterator[sa.Connection]:
    """A write transaction whose deletes and updates overwrite with zeros whatever they
    free in the file (SQLite `secure_delete=ON`, set back to the engine's FAST after)."""
    sqlite = engine.dialect.name == "sqlite"
    with engine.begin() as c:
        if sqlite:
            c.exec_driver_sql("PRAGMA secure_delete=ON")
        try:
            yield c
        finally:
            if sqlite:
                with contextlib.suppress(sa.exc.DBAPIError):
                    c.exec_driver_sql("PRAGMA secure_delete=FAST")


def scrub(engine: sa.Engine, tables: Sequence[str]) -> None:
    """Leave the committed state alone in the database's files: no earlier version of a row
    of `tables` survives anywhere in them. Runs outside any transaction."""
    if engine.dialect.name == "sqlite":
        _truncate_log(engine)
        return
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as c:
        quoted = ", ".join(c.dialect.identifier_preparer.quote(t) for t in tables)
        c.exec_driver_sql(f"VACUUM (FULL) {quoted}")


# How long an erasure waits for the log to be cut while something else holds it.
TRUNCATE_PATIENCE_SECONDS = 30.0
_TRUNCATE_RETRY_SECONDS = 0.05


def _truncate_log(engine: sa.Engine) -> None:
    """Copy every page of the write-ahead log into the database and cut the log to nothing.
    A reader still on an earlier snapshot keeps the checkpoint from finishing; SQLite waits
    for it within the connection's busy timeout. Another checkpoint running at that moment
    (the engine's own checkpointer, woken by any commit) makes SQLite answer busy at once
    without waiting, leaving the erased rows' earlier pages in the database file: so a busy
    answer is asked again until the log is cut or the patience runs out. A log left whole
    after that is reported (no content in the line) and cut by the next erasure or by the
    checkpointer's own TRUNCATE when the engine closes."""
    deadline = time.monotonic() + TRUNCATE_PATIENCE_SECONDS
    while _checkpoint_busy(engine):
        if time.monotonic() >= deadline:
            log.warning("store.log_not_truncated_after_erasure")
            return
        time.sleep(_TRUNCATE_RETRY_SECONDS)


def _checkpoint_busy(engine: sa.Engine) -> bool:
    connection = engine.raw_connection()
    try:
        cursor = connection.cursor()
        cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        answer = cursor.fetchone()
        cursor.close()
    finally:
        connection.close()
    return answer is not None and bool(answer[0])
