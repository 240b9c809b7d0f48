"""Raw MIME in append-only pack files, addressed by the SHA-256 of the octets.

A message is one record in a pack: a small header (a marker, the digest, the length) and the
octets, followed directly by the text normalization read out of it when there is one (see
`texts`). A SQLite index beside the packs maps each key to its pack, the offset and length of
the octets, and the length of the text after them.
Storing a batch is one write and one flush of one pack, and one index transaction: creating a
file per message costs far more than that on many file systems (an inode allocation each), and
an initial synchronization stores tens of thousands of messages.

Rules that keep it safe to kill at any moment:
- each store instance appends only to packs it created, and holds an exclusive `flock` on the
  pack it is appending to, so no two writers ever share one and compaction leaves it alone;
- records are made durable before the index names them, and the index is durable before
  `write_many` returns; an interrupted append leaves octets no index row points at;
- every read re-hashes the octets (a text record checks its CRC-32), so damage is reported as
  missing content, never served.

Content stored by earlier versions as one file per message (`<first two hex digits>/<key>`) is
still read, verified and discarded the same way.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import sqlite3
import struct
import threading
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mailfathom.adapters.content.pack_reading import PackReaders
from mailfathom.adapters.content.texts import decode_text, is_text_record
from mailfathom.adapters.sqlite_wal import use_write_ahead_log
from mailfathom.domain.errors import ContentMissingError

CONTENT_KEY = re.compile(r"^[0-9a-f]{64}$")
MARKER = b"MFC1"
HEADER = struct.Struct(">4s32sQ")
# A pack is closed and a new one begun once it would grow past this.
PACK_LIMIT = 64 * 1024 * 1024
# Packs kept open for reading (see `pack_reading`): opening a pack cost about as much as
# reading a message's text from it.
_OPEN_FOR_READING = 16
# How many octets os.writev takes in one call at most is bounded by IOV_MAX buffers.
_IOV_MAX = 1024
_INDEX_FILE = "index.sqlite3"
# How long opening the index waits out other processes switching a new one to its log.
_INDEX_PATIENCE_SECONDS = 60.0
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, pack TEXT NOT NULL, "
    "offset INTEGER NOT NULL, length INTEGER NOT NULL) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS ix_entries_pack ON entries (pack)",
)
# Added once messages' text went into the packs; NULL where no text follows the octets.
_TEXT_COLUMN = "ALTER TABLE entries ADD COLUMN text_length INTEGER"
# What `_write_records` appends for one key: the octets and the text record, if any.
_Record = tuple[bytes, bytes | None]
# (key, pack, offset of the octets, their length, length of the text record or None)
_Entry = tuple[str, str, int, int, int | None]


# An entry appended but not yet flushed and indexed (see `append_pending`).
PendingEntry = _Entry


def keyed_records(
    raws: Sequence[bytes], texts: Sequence[bytes | None] | None
) -> tuple[list[str], dict[str, _Record]]:
    """The key of every message, in order, and one record per distinct key."""
    keys = [hashlib.sha256(raw).hexdigest() for raw in raws]
    records: dict[str, _Record] = {}
    for key, raw, text in zip(keys, raws, texts or [None] * len(raws), strict=True):
        records[key] = (raw, text)
    return keys, records


@dataclass(frozen=True, slots=True)
class Location:
    path: Path
    offset: int
    length: int


@dataclass(slots=True)
class _OpenPack:
    name: str
    fd: int
    size: int


class PackContentStore:
    """Packs under `root/packs/`, the index in `root/index.sqlite3`."""

    def __init__(self, root: Path, *, durable: bool = True) -> None:
        self._root = root
        self._packs = root / "packs"
        self._packs.mkdir(parents=True, exist_ok=True)
        self._durable = durable
        # Writers (appending, indexing, compacting) take `_lock`; readers never do, so a read
        # waits neither for a write of this process nor for the index lock another holds.
        self._lock = threading.RLock()
        self._current: _OpenPack | None = None
        self._readers = PackReaders(_OPEN_FOR_READING, self._connect_reader)
        self._index = self._connect()
        use_write_ahead_log(self._index, _INDEX_PATIENCE_SECONDS)
        self._index.execute(f"PRAGMA synchronous={'FULL' if durable else 'NORMAL'}")
        for statement in _SCHEMA:
            self._index.execute(statement)
        _add_text_column(self._index)

    # -- writing -------------------------------------------------------------------------

    def put(self, raw: bytes) -> str:
        """Store one message; a damaged copy already held under its key is replaced."""
        key = hashlib.sha256(raw).hexdigest()
        with self._lock:
            if self._intact(key, len(raw)):
                return key
            self._forget([key])
            self._append({key: (raw, None)})
        return key

    def put_many(self, raws: Sequence[bytes]) -> list[str]:
        return self.write_many(raws)

    def write_many(
        self, raws: Sequence[bytes], texts: Sequence[bytes | None] | None = None
    ) -> list[str]:
        """Store messages not held yet and return every key, in order. `texts`, when given,
        holds for each message its encoded text record (see `texts.encode_text`) or None, and
        the records go in the same append. With a durable store the octets and their index
        rows are on disk when this returns."""
        keys, records = keyed_records(raws, texts)
        with self._lock:
            new = self._not_held(records)
            if new:
                self._append(new)
        return keys

    def append_pending(
        self, raws: Sequence[bytes], texts: Sequence[bytes | None] | None = None
    ) -> tuple[list[str], list[PendingEntry]]:
        """Append what `write_many` would, but neither flush nor index it: the keys in order,
        and the entries `commit_pending` must be given before anything may name those keys.

        This lets several processes append while one other flushes each pack once for all
        of them. Until the entries are committed, the octets are unused space, as after an
        interrupted append."""
        keys, records = keyed_records(raws, texts)
        with self._lock:
            new = self._not_held(records)
            return keys, self._write_records(new, flush=False) if new else []

    def commit_pending(self, entries: Sequence[PendingEntry]) -> None:
        """Make appended records durable, one flush per pack, then index them in one
        transaction. Only after this returns may a message row name their keys."""
        if not entries:
            return
        if self._durable:
            for name in sorted({entry[1] for entry in entries}):
                fd = os.open(self._packs / name, os.O_RDONLY)
                try:
                    os.fdatasync(fd)  # flushes the file's pages whoever wrote them
                finally:
                    os.close(fd)
        with self._lock:
            self._record(list(entries))

    def _not_held(self, records: dict[str, _Record]) -> dict[str, _Record]:
        known = self._known(records)
        # A copy stored without its text (by an earlier version) is stored again with it.
        return {
            key: record
            for key, record in records.items()
            if key not in known or (record[1] is not None and not known[key])
        }

    def _append(self, new: dict[str, _Record]) -> None:
        self._record(self._write_records(new, flush=True))

    def _write_records(self, new: dict[str, _Record], *, flush: bool) -> list[_Entry]:
        """Append one record per message to the current pack (durably when the store is and
        `flush` is set); returns the index entry of each, in order."""
        incoming = sum(HEADER.size + len(raw) + len(text or b"") for raw, text in new.values())
        pack = self._writable(incoming)
        records: list[_Entry] = []
        buffers: list[bytes] = []
        offset = pack.size
        for key, (raw, text) in new.items():
            buffers.append(HEADER.pack(MARKER, bytes.fromhex(key), len(raw)))
            buffers.append(raw)
            if text is not None:
                buffers.append(text)
            text_length = None if text is None else len(text)
            records.append((key, pack.name, offset + HEADER.size, len(raw), text_length))
            offset += HEADER.size + len(raw) + (text_length or 0)
        _write_all(pack.fd, buffers, pack.size)
        pack.size = offset
        if self._durable and flush:
            os.fdatasync(pack.fd)
        return records

    def _writable(self, incoming: int) -> _OpenPack:
        pack = self._current
        if pack is not None and pack.size > 0 and pack.size + incoming > PACK_LIMIT:
            self._close_pack()
            pack = None
        while pack is None:
            name = f"{uuid.uuid4().hex}.pack"
            fd = os.open(self._packs / name, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
            fcntl.flock(fd, fcntl.LOCK_EX)
            if os.fstat(fd).st_nlink == 0:  # removed as empty before it was locked
                os.close(fd)
                continue
            if self._durable:
                _fsync_directory(self._packs)
            pack = self._current = _OpenPack(name, fd, 0)
        return pack

    def _record(self, records: list[_Entry]) -> None:
        """Index new records. A key another writer indexed meanwhile keeps that copy (unless
        it lacks the text this one has); the octets written here for it are left for
        `reclaim`."""
        db = self._index
        db.execute("BEGIN IMMEDIATE")
        with db:  # commits, or rolls back on an error
            db.executemany(
                "INSERT INTO entries (key, pack, offset, length, text_length) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (key) DO UPDATE SET pack = excluded.pack, "
                "offset = excluded.offset, length = excluded.length, "
                "text_length = excluded.text_length "
                "WHERE entries.text_length IS NULL AND excluded.text_length IS NOT NULL",
                records,
            )

    def _close_pack(self) -> None:
        if self._current is not None:
            os.close(self._current.fd)
            self._current = None

    def reachable(self) -> bool:
        """Whether this store can be written to and read from now: its packs directory
        can be entered and written, and its index answers (a readiness check)."""
        if not os.access(self._packs, os.R_OK | os.W_OK | os.X_OK):
            return False
        with self._lock:
            return self._index.execute("SELECT count(*) FROM sqlite_master").fetchone() is not None

    def close(self) -> None:
        with self._lock:
            self._close_pack()
            self._readers.close()
            self._index.close()

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(
            self._root / _INDEX_FILE, timeout=60.0, isolation_level=None, check_same_thread=False
        )

    def _connect_reader(self) -> sqlite3.Connection:
        """A read-only index connection: a reader never lays down an index of its own."""
        return sqlite3.connect(
            f"{(self._root / _INDEX_FILE).as_uri()}?mode=ro",
            uri=True,
            timeout=60.0,
            isolation_level=None,
            check_same_thread=False,
        )

    def _lookup(self, sql: str, parameters: tuple[str]) -> tuple[Any, ...] | None:
        """One row of the index; None also when the index itself is gone (nothing held)."""
        try:
            return self._readers.lookup(sql, parameters)
        except sqlite3.OperationalError:
            if (self._root / _INDEX_FILE).exists():
                raise
            return None

    def _read(self, location: Location) -> bytes:
        """The octets at `location`, through a descriptor kept open for its pack."""
        return self._readers.read(location.path, location.offset, location.length)

    # -- reading -------------------------------------------------------------------------

    def locate(self, key: str) -> Location | None:
        """Where the octets of `key` are kept in a pack (None: not in any pack)."""
        row = self._lookup("SELECT pack, offset, length FROM entries WHERE key = ?", (key,))
        if row is None:
            return None
        return Location(self._packs / row[0], int(row[1]), int(row[2]))

    def get(self, key: str) -> bytes:
        if not CONTENT_KEY.match(key):
            raise ContentMissingError("The stored content of this email is missing.")
        raw: bytes | None = None
        for _ in range(2):  # a pack compacted between lookup and read: look up again
            location = self.locate(key)
            if location is None:
                raw = self._legacy_read(key)
                break
            try:
                raw = self._read(location)
                break
            except FileNotFoundError:
                continue
            except OSError:
                break
        if raw is None:
            raise ContentMissingError("The stored content of this email is missing.")
        if hashlib.sha256(raw).hexdigest() != key:
            raise ContentMissingError("The stored content of this email is damaged.")
        return raw

    def get_text(self, key: str, *, with_html: bool = True) -> tuple[str, str | None]:
        """(plain, html) of the message stored under content key `key`, as `write_many` was
        given it (html None unless `with_html`); `ContentMissingError` when that record is
        absent or damaged."""
        if not CONTENT_KEY.match(key):
            raise ContentMissingError("The stored text of this email is missing.")
        for _ in range(2):  # a pack compacted between lookup and read: look up again
            row = self._lookup(
                "SELECT pack, offset + length, text_length FROM entries WHERE key = ?", (key,)
            )
            if row is None or row[2] is None:
                break
            try:
                record = self._read(Location(self._packs / row[0], row[1], row[2]))
                return decode_text(record, with_html=with_html)
            except FileNotFoundError:
                continue
            except OSError:
                break
        raise ContentMissingError("The stored text of this email is missing.")

    def exists(self, key: str) -> bool:
        if not CONTENT_KEY.match(key):
            return False
        return self.locate(key) is not None or self._legacy_path(key).is_file()

    def _known(self, keys: Iterable[str]) -> dict[str, bool]:
        """The keys among `keys` held already, each with whether its text is held too."""
        wanted = sorted(set(keys))
        found: dict[str, bool] = {}
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            found.update(
                (row[0], row[1] is not None)
                for row in self._index.execute(
                    "SELECT key, text_length FROM entries "
                    f"WHERE key IN ({', '.join('?' * len(chunk))})",
                    chunk,
                )
            )
        return found

    def _intact(self, key: str, length: int) -> bool:
        location = self.locate(key)
        if location is None or location.length != length:
            return False
        try:
            return hashlib.sha256(self._read(location)).hexdigest() == key
        except OSError:
            return False

    # -- removing ------------------------------------------------------------------------

    def discard(self, key: str) -> None:
        if not CONTENT_KEY.match(key):
            return
        with self._lock:
            self._forget([key])
        self._legacy_path(key).unlink(missing_ok=True)

    def _forget(self, keys: Sequence[str]) -> None:
        self._index.executemany("DELETE FROM entries WHERE key = ?", [(k,) for k in keys])

    def reclaim(self, min_dead_share: float = 0.5) -> int:
        """Rewrite every pack of which at least `min_dead_share` is dead (discarded copies,
        or octets a killed writer never indexed) into the current pack, and delete it.
        Returns how many packs were removed. Packs a writer still appends to are skipped."""
        with self._lock:
            current = self._current.name if self._current is not None else None
            live = dict(
                self._index.execute(
                    "SELECT pack, sum(length + coalesce(text_length, 0)) "
                    f"+ count(*) * {HEADER.size} FROM entries "
                    "GROUP BY pack"
                ).fetchall()
            )
        removed = 0
        for path in sorted(self._packs.glob("*.pack")):
            if path.name == current:
                continue
            try:
                size = path.stat().st_size
            except FileNotFoundError:
                continue
            held = int(live.get(path.name, 0))
            if size and (size - held) / size < min_dead_share:
                continue
            if self._rewrite(path.name, path):
                removed += 1
        return removed

    def _rewrite(self, name: str, path: Path) -> bool:
        fd = os.open(path, os.O_RDONLY)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False
            with self._lock:
                live = self._index.execute(
                    "SELECT key, offset, length, text_length FROM entries WHERE pack = ?",
                    (name,),
                ).fetchall()
                intact: dict[str, _Record] = {}
                for key, offset, length, text_length in live:
                    raw = os.pread(fd, int(length), int(offset))
                    if hashlib.sha256(raw).hexdigest() != key:
                        continue
                    text = os.pread(fd, text_length, offset + length) if text_length else None
                    intact[key] = (raw, text if text is not None and is_text_record(text) else None)
                self._move(name, [row[0] for row in live], intact)
        finally:
            os.close(fd)
        path.unlink(missing_ok=True)
        self._readers.forget(name)
        if self._durable:
            _fsync_directory(self._packs)
        return True

    def _move(self, name: str, live: list[str], intact: dict[str, _Record]) -> None:
        """Point the entries of pack `name` at fresh copies (damaged ones are dropped, so a
        read reports them missing and they are fetched again; a damaged text is dropped
        alone) and forget the pack."""
        moves = [
            (pack, offset, text_length, key)
            for key, pack, offset, _, text_length in (
                self._write_records(intact, flush=True) if intact else []
            )
        ]
        db = self._index
        db.execute("BEGIN IMMEDIATE")
        with db:  # commits, or rolls back on an error
            db.executemany(
                "UPDATE entries SET pack = ?, offset = ?, text_length = ? "
                "WHERE key = ? AND pack = ?",
                [(*move, name) for move in moves],
            )
            db.executemany(
                "DELETE FROM entries WHERE key = ? AND pack = ?",
                [(key, name) for key in live if key not in intact],
            )

    def sweep_temporary(self, older_than_seconds: float = 600.0) -> int:
        """Remove what killed writers left behind: packs no index row points into and
        nobody appends to, and half-written one-file copies of earlier versions, when older
        than the limit. Returns how many files were removed."""
        limit = time.time() - older_than_seconds
        removed = 0
        with self._lock:
            used = {row[0] for row in self._index.execute("SELECT DISTINCT pack FROM entries")}
            current = self._current.name if self._current is not None else None
        for path in self._packs.glob("*.pack"):
            if path.name in used or path.name == current or not _older(path, limit):
                continue
            if _remove_unlocked(path):
                self._readers.forget(path.name)
                removed += 1
        for path in self._root.glob("[0-9a-f][0-9a-f]/.tmp-*"):
            if _older(path, limit):
                path.unlink(missing_ok=True)
                removed += 1
        return removed

    def used_octets(self) -> int:
        with self._lock:
            (packed,) = self._index.execute(
                "SELECT coalesce(sum(length + coalesce(text_length, 0)), 0) FROM entries"
            ).fetchone()
        total = int(packed)
        for directory in self._root.glob("[0-9a-f][0-9a-f]"):
            for path in directory.iterdir():
                if CONTENT_KEY.match(path.name):
                    try:
                        total += path.stat().st_size
                    except OSError:
                        continue
        return total

    # -- one file per message (earlier versions) -----------------------------------------

    def _legacy_path(self, key: str) -> Path:
        return self._root / key[:2] / key

    def _legacy_read(self, key: str) -> bytes | None:
        try:
            return self._legacy_path(key).read_bytes()
        except OSError:
            return None


def _add_text_column(index: sqlite3.Connection) -> None:
    """Give an index made before texts were kept its `text_length` column (once, whichever
    process gets there first)."""
    columns = {row[1] for row in index.execute("PRAGMA table_info(entries)")}
    if "text_length" in columns:
        return
    try:
        index.execute(_TEXT_COLUMN)
    except sqlite3.OperationalError as error:
        if "duplicate column" not in str(error):
            raise


def _write_all(fd: int, buffers: list[bytes], offset: int) -> None:
    """Write `buffers` one after the other from `offset`, however the kernel splits it."""
    pending = [memoryview(b) for b in buffers if b]
    first = 0
    while first < len(pending):
        written = os.pwritev(fd, pending[first : first + _IOV_MAX], offset)
        offset += written
        while first < len(pending) and written >= len(pending[first]):
            written -= len(pending[first])
            first += 1
        if written:
            pending[first] = pending[first][written:]


def _fsync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _older(path: Path, limit: float) -> bool:
    try:
        return path.stat().st_mtime < limit
    except OSError:
        return False


def _remove_unlocked(path: Path) -> bool:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        path.unlink(missing_ok=True)
        return True
    finally:
        os.close(fd)
