"""What readers of a pack store share, so that they wait neither for each other nor for a
writer: descriptors kept open per pack, and index connections, one per concurrent lookup.

Both are guarded by one lock held only around a few dictionary and list steps (no system
call, nothing that gives up the interpreter lock), unlike the store's writer lock, which is
held across appends, flushes and index transactions.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mailfathom.domain.errors import StoreError


@dataclass(slots=True)
class _Reader:
    """A descriptor kept open for reading a pack: closed only once it is out of the cache
    (`retired`) and no read uses it, so a descriptor number is never read after it was
    closed and perhaps given to another file."""

    fd: int
    users: int = 0
    retired: bool = False


class PackReaders:
    """Up to `bound` packs kept open for reading, the least recently read closed first.

    A pack deleted by compaction in another process stays readable through its descriptor;
    nothing looks there again once the index moved its entries, and the descriptor goes when
    it drops out of the cache and no read is using it."""

    def __init__(self, bound: int, connect: Callable[[], sqlite3.Connection]) -> None:
        self._bound = bound
        self._connect = connect
        self._lock = threading.Lock()
        self._open: OrderedDict[str, _Reader] = OrderedDict()
        # SQLite in write-ahead-log mode lets each connection read the last committed index
        # while a writer commits.
        self._idle: list[sqlite3.Connection] = []
        self._connections: list[sqlite3.Connection] = []
        # Once closed, nothing is opened or kept again: a lookup or read in flight across
        # `close` closes what it used, and one begun after it is refused.
        self._closed = False

    def lookup(self, sql: str, parameters: tuple[str]) -> tuple[Any, ...] | None:
        """One row of the index, read on a connection no other thread is using."""
        with self._lock:
            _refuse_if(self._closed)
            connection = self._idle.pop() if self._idle else None
        if connection is None:
            connection = self._connect()
            with self._lock:
                closed = self._closed
                if not closed:
                    self._connections.append(connection)
            if closed:
                connection.close()
                _refuse_if(closed)
        try:
            rows = connection.execute(sql, parameters).fetchall()
        finally:
            with self._lock:
                closed = self._closed
                if not closed:
                    self._idle.append(connection)
            if closed:
                connection.close()
        return tuple(rows[0]) if rows else None

    def read(self, path: Path, offset: int, length: int) -> bytes:
        """`length` octets at `offset` of the pack at `path`."""
        name = path.name
        with self._lock:
            _refuse_if(self._closed)
            reader = self._open.get(name)
            if reader is not None:
                self._open.move_to_end(name)
                reader.users += 1
        if reader is None:
            reader = self._opened(name, path)
        try:
            return os.pread(reader.fd, length, offset)
        finally:
            with self._lock:
                reader.users -= 1
                unused = reader.fd if reader.retired and reader.users == 0 else None
            _close_all([unused])

    def _opened(self, name: str, path: Path) -> _Reader:
        """The reader of pack `name`, opened now unless another read opened it meanwhile,
        with this read counted among its users."""
        opened = os.open(path, os.O_RDONLY)
        spare: int | None = None
        evicted: int | None = None
        with self._lock:
            if self._closed:
                os.close(opened)
                _refuse_if(True)
            reader = self._open.get(name)
            if reader is not None:
                spare = opened
            else:
                reader = self._open[name] = _Reader(opened)
                if len(self._open) > self._bound:
                    evicted = _retire(self._open.popitem(last=False)[1])
            reader.users += 1
        _close_all([spare, evicted])
        return reader

    def forget(self, name: str) -> None:
        """Close pack `name` once no read uses it (it was deleted)."""
        with self._lock:
            reader = self._open.pop(name, None)
            unused = _retire(reader) if reader is not None else None
        _close_all([unused])

    def close(self) -> None:
        with self._lock:
            self._closed = True
            unused = [_retire(reader) for reader in self._open.values()]
            self._open.clear()
            connections, self._connections, self._idle = self._connections, [], []
        _close_all(unused)
        for connection in connections:
            connection.close()


def _refuse_if(closed: bool) -> None:
    if closed:
        raise StoreError("The content store was closed while it was being read.")


def _retire(reader: _Reader) -> int | None:
    """Take `reader` out of use once its last read ends; its descriptor, when no read uses
    it now (to be closed once the lock is released)."""
    reader.retired = True
    return reader.fd if reader.users == 0 else None


def _close_all(fds: Iterable[int | None]) -> None:
    for fd in fds:
        if fd is not None:
            os.close(fd)
