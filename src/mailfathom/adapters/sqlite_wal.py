"""Asking a SQLite file for write-ahead logging when other connections may ask at once."""

from __future__ import annotations

import sqlite3
import time
from typing import Any

import sqlean

_SQLITE_BUSY = 5
_FIRST_PAUSE = 0.005
_LONGEST_PAUSE = 0.1


def use_write_ahead_log(connection: Any, patience_seconds: float) -> None:
    """Switch the file `connection` (a DB-API connection or cursor of `sqlite3` or
    `sqlean`) opened to write-ahead logging; a file already switched is left as it is.

    Switching needs the file to itself. When two connections switch a new file at the same
    moment, each holding a shared lock and wanting the exclusive one, SQLite answers one of
    them SQLITE_BUSY at once, without its busy wait, since waiting could never end. That one
    tries again, until `patience_seconds` have passed."""
    deadline = time.monotonic() + patience_seconds
    pause = _FIRST_PAUSE
    while True:
        try:
            connection.execute("PRAGMA journal_mode=WAL")
            return
        except (sqlite3.OperationalError, sqlean.dbapi2.OperationalError) as failure:
            busy = getattr(failure, "sqlite_errorcode", None) == _SQLITE_BUSY
            if not busy or time.monotonic() >= deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, _LONGEST_PAUSE)
