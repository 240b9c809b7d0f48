"""Opening the database: the embedded SQLite file or a PostgreSQL server.

SQLite is reached through `sqlean.py` (a build of SQLite with FTS5 and extension loading that
this Python's own `sqlite3` lacks). WAL journaling with synchronous=NORMAL keeps every committed
transaction across a killed process; a power loss can drop the last commits, never corrupt.
"""

from __future__ import annotations

import contextlib
import threading
import time
from pathlib import Path
from typing import Any

import sqlalchemy as sa
import sqlean
from sqlalchemy import event

from mailfathom.adapters.config.secrets import read_secret
from mailfathom.adapters.sqlite_wal import use_write_ahead_log
from mailfathom.domain.config import StoreConfig

# SQLite's own lower() folds ASCII only; the read side compares text folded by Python's rule,
# registered on every connection under this name (see reading_filters.TextRules).
SQLITE_FOLD_FUNCTION = "mailfathom_lower"


def python_lower(value: object) -> object:
    return value.lower() if isinstance(value, str) else value


def sqlite_url(path: Path) -> str:
    return f"sqlite+pysqlite:///{path}"


def store_url(config: StoreConfig) -> str:
    """The database URL, with the password read from its secret reference when one is set."""
    if config.database_url:
        if config.database_password_secret is None:
            return config.database_url
        url = sa.make_url(config.database_url).set(
            password=read_secret(config.database_password_secret)
        )
        return url.render_as_string(hide_password=False)
    return sqlite_url(config.sqlite_path)


def create_store_engine(
    url: str, *, read_only: bool = False, connections: int | None = None
) -> sa.Engine:
    """An engine for `url` with the session settings the store relies on.

    A read-only engine serves the reading tools: on SQLite its transactions begin deferred
    and its connections refuse writes, so a read never takes the write lock a synchronization
    pass needs (and never waits for one). On PostgreSQL every transaction is a snapshot already;
    there the read-only engine does not ping a connection before handing it out (a round trip
    per call): its one user, `SqlMailboxReader.snapshot`, begins again on a new connection
    when its first statement finds the connection lost. A failed statement's error never
    carries the values it was given (mail, addresses), so nothing that logs an error can log
    them. `connections`: the most this engine holds to PostgreSQL (by default
    `POSTGRESQL_CONNECTIONS`)."""
    if url.startswith("sqlite"):
        return _sqlite_engine(url, read_only=read_only)
    return sa.create_engine(
        url,
        pool_pre_ping=not read_only,
        pool_size=connections or POSTGRESQL_CONNECTIONS,
        max_overflow=0,
        hide_parameters=True,
    )


# The most connections one engine holds to PostgreSQL, all of them kept once opened. A
# connection opened past a smaller kept pool (an overflow) was closed again when it came back,
# so under steady load most calls paid for a new server process and its login: at 30
# concurrent calls, more connections were opened than calls answered.
POSTGRESQL_CONNECTIONS = 10


# The checkpointer copies the log into the database at most once per interval while commits
# come, and again when none came for a while.
_BUSY_TIMEOUT_MS = 30_000
_CHECKPOINT_INTERVAL_SECONDS = 1.0
_IDLE_CHECKPOINT_SECONDS = 5.0


class _Checkpointer:
    """Moves committed pages from the write-ahead log into the database off the commit path.

    SQLite's automatic checkpoint runs inside the COMMIT that crosses its threshold, so the
    writer waits for the copy and its fsync. Here the writer's connections leave that to a
    thread with a connection of its own, which SQLite lets run without the interpreter lock
    while the writer goes on. A PASSIVE checkpoint never blocks readers or the writer.
    """

    def __init__(self, path: str) -> None:
        self._path = path
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="sqlite-checkpoint", daemon=True)
        self._thread.start()

    def poke(self) -> None:
        self._wake.set()

    def _run(self) -> None:
        connection = sqlean.connect(self._path, isolation_level=None, check_same_thread=False)
        try:
            connection.execute(f"PRAGMA busy_timeout={_BUSY_TIMEOUT_MS}")
            last = 0.0
            while not self._stop.is_set():
                self._wake.wait(timeout=_IDLE_CHECKPOINT_SECONDS)
                self._wake.clear()
                # At most one checkpoint per interval while commits keep coming: a page that
                # several commits rewrite (an index page, an FTS segment merged soon after)
                # is then copied once, not once per commit.
                pause = last + _CHECKPOINT_INTERVAL_SECONDS - time.monotonic()
                if pause > 0 and self._stop.wait(pause):
                    break
                with contextlib.suppress(sqlean.Error):
                    connection.execute("PRAGMA wal_checkpoint(PASSIVE)")
                last = time.monotonic()
            with contextlib.suppress(sqlean.Error):
                connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            connection.close()

    def close(self) -> None:
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout=30)


def _sqlite_engine(url: str, *, read_only: bool = False) -> sa.Engine:
    engine = sa.create_engine(
        url, module=sqlean.dbapi2, pool_size=5, max_overflow=10, hide_parameters=True
    )
    database = sa.make_url(url).database
    on_disk = bool(database) and database != ":memory:"
    checkpointer = _Checkpointer(str(database)) if on_disk and not read_only else None

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Transactions are begun explicitly below, so the driver must not begin its own.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        # Set first, so that what follows waits on other connections' locks.
        cursor.execute(f"PRAGMA busy_timeout={_BUSY_TIMEOUT_MS}")
        # Small pages: each batch inserts entries at scattered places of several indexes
        # (addresses, identifiers, conversations), and every page it touches is written
        # out whole, to the log and again by the checkpoint. At 20,000 messages a sync
        # took 21 s with 4 KiB pages, 22 to 24 s with 8 KiB and 24 s with 16 KiB. It
        # applies to a database this connection creates; an existing one keeps its size.
        cursor.execute("PRAGMA page_size=4096")
        use_write_ahead_log(cursor, _BUSY_TIMEOUT_MS / 1000)
        for pragma in (
            "PRAGMA synchronous=NORMAL",
            "PRAGMA foreign_keys=ON",
            # What a delete or an update frees within a page is overwritten with zeros as the
            # page is written anyway. FAST never costs a write of its own: a whole page freed
            # (an overflow page, a page an index merged away) keeps its bytes, which is why the
            # contact book's writes turn it fully on for their transaction (scrubbing.py).
            "PRAGMA secure_delete=FAST",
            # Readers keep more pages at hand. A writer's cache is memory a long
            # synchronization holds on to, but one batch dirties more pages than 4 MiB hold
            # (its bodies alone are as large as the batch), so a smaller cache spills index
            # pages mid-transaction and reads them back: at 20,000 messages, 8 MiB read
            # 240,000 pages from the files instead of 432,000 and cost the committing thread
            # 4 % less CPU, for no peak memory that the runs could tell apart.
            "PRAGMA cache_size=" + ("-16384" if read_only else "-8192"),
            # Once a checkpoint has emptied the log, the file is cut back to this size instead
            # of keeping the high-water mark of an initial synchronization on disk.
            "PRAGMA journal_size_limit=67108864",
            # The checkpointer thread does this work; the limit here only bounds the log
            # should that thread fall behind.
            "PRAGMA wal_autocheckpoint=" + ("20000" if checkpointer else "1000"),
            *(["PRAGMA query_only=ON"] if read_only else []),
        ):
            cursor.execute(pragma)
        cursor.close()
        dbapi_connection.create_function(SQLITE_FOLD_FUNCTION, 1, python_lower, deterministic=True)

    @event.listens_for(engine, "begin")
    def _on_begin(connection: sa.Connection) -> None:
        # IMMEDIATE takes the write lock at the start, so two writers queue on busy_timeout
        # instead of one of them failing when it tries to upgrade a read lock.
        connection.exec_driver_sql("BEGIN" if read_only else "BEGIN IMMEDIATE")

    if checkpointer is not None:

        @event.listens_for(engine, "commit")
        def _on_commit(_connection: sa.Connection) -> None:
            checkpointer.poke()

        @event.listens_for(engine, "engine_disposed")
        def _on_dispose(_engine: sa.Engine) -> None:
            checkpointer.close()

    return engine
