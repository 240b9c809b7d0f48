"""Raw MIME on the file system, one file per distinct message, named by its SHA-256.

Content addressing makes every write idempotent (a message stored twice, or a batch repeated
after a crash, lands on the same file) and makes damage detectable: a read re-hashes the octets
and anything that does not match its name is reported as missing rather than served.
"""

from __future__ import annotations

import ctypes
import hashlib
import itertools
import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from mailfathom.domain.errors import ContentMissingError

_KEY = re.compile(r"^[0-9a-f]{64}$")


class FileContentStore:
    """Files under `root/<first two hex digits>/<key>`.

    Writing and flushing are separate steps so that a batch written by several processes is
    made durable with one flush before the rows naming it are committed."""

    def __init__(self, root: Path, *, durable: bool = True) -> None:
        self._root = root
        self._root_text = str(root)
        self._durable = durable
        self._root.mkdir(parents=True, exist_ok=True)
        self._directories: set[str] = set()
        self._counter = itertools.count()

    def path_for(self, key: str) -> Path:
        if not _KEY.match(key):
            raise ValueError("not a content key")
        return self._root / key[:2] / key

    def put(self, raw: bytes) -> str:
        return self.put_many([raw])[0]

    def put_many(self, raws: Sequence[bytes]) -> list[str]:
        keys = [self.write(raw) for raw in raws]
        self.flush(keys)
        return keys

    def write(self, raw: bytes) -> str:
        """Store the octets under their hash without waiting for the disk; see `flush`."""
        key = hashlib.sha256(raw).hexdigest()
        directory = os.path.join(self._root_text, key[:2])
        target = os.path.join(directory, key)
        if self._holds(target, key, len(raw)):
            return key
        if directory not in self._directories:
            os.makedirs(directory, exist_ok=True)
            self._directories.add(directory)
        temporary = os.path.join(directory, f".tmp-{os.getpid()}-{next(self._counter)}")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            _write_all(fd, raw)
        finally:
            os.close(fd)
        os.replace(temporary, target)
        return key

    def flush(self, keys: Sequence[str]) -> None:
        """Make the files of `keys` and their directory entries durable. The caller commits
        the rows naming these files only after this returns, so a row never outlives its
        content on disk."""
        if keys and self._durable:
            _flush(self._root, [self.path_for(k) for k in keys])

    @staticmethod
    def _holds(target: str, key: str, size: int) -> bool:
        """Whether an intact copy is already in place (a damaged one is replaced)."""
        try:
            if os.stat(target).st_size != size:
                return False
            with open(target, "rb") as handle:
                return hashlib.sha256(handle.read()).hexdigest() == key
        except OSError:
            return False

    def get(self, key: str) -> bytes:
        try:
            raw = self.path_for(key).read_bytes()
        except (OSError, ValueError) as exc:
            raise ContentMissingError("The stored content of this email is missing.") from exc
        if hashlib.sha256(raw).hexdigest() != key:
            raise ContentMissingError("The stored content of this email is damaged.")
        return raw

    def exists(self, key: str) -> bool:
        try:
            return self.path_for(key).is_file()
        except ValueError:
            return False

    def discard(self, key: str) -> None:
        try:
            self.path_for(key).unlink(missing_ok=True)
        except ValueError:
            return

    def sweep_temporary(self, older_than_seconds: float = 600.0) -> int:
        """Remove half-written files a killed writer left behind; returns how many."""
        limit = time.time() - older_than_seconds
        removed = 0
        for path in self._root.rglob(".tmp-*"):
            try:
                if path.stat().st_mtime < limit:
                    path.unlink()
                    removed += 1
            except OSError:
                continue
        return removed

    def used_octets(self) -> int:
        total = 0
        for dirpath, _dirs, files in os.walk(self._root):
            for name in files:
                try:
                    total += os.stat(os.path.join(dirpath, name)).st_size
                except OSError:
                    continue
        return total


def _write_all(fd: int, raw: bytes) -> None:
    view = memoryview(raw)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _flush(root: Path, written: Sequence[Path]) -> None:
    """Make files and their directory entries durable.

    On Linux one syncfs(2) call flushes the whole file system at once, far cheaper than a
    fsync per file and per directory; elsewhere each file and directory is synced."""
    if _SYNCFS is not None:
        fd = os.open(root, os.O_RDONLY)
        try:
            if _SYNCFS(fd) == 0:
                return
        finally:
            os.close(fd)
    for path in written:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    for directory in {p.parent for p in written}:
        _fsync_dir(directory)


def _load_syncfs() -> Callable[[int], int] | None:
    if sys.platform != "linux":
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        function: Callable[[int], int] = libc.syncfs
    except (OSError, AttributeError):
        return None
    return function


_SYNCFS = _load_syncfs()


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
