"""Raw MIME on the file system, one file per distinct message, named by its SHA-256.

Content addressing makes every write idempotent (a message stored twice, or a batch repeated
after a crash, lands on the same file) and makes damage detectable: a read re-hashes the octets
and anything that does not match its name is reported as missing rather than served.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path

from mailfathom.domain.errors import ContentMissingError

_KEY = re.compile(r"^[0-9a-f]{64}$")


class FileContentStore:
    def __init__(self, root: Path, *, durable: bool = True) -> None:
        self._root = root
        self._durable = durable
        self._root.mkdir(parents=True, exist_ok=True)

    def path_for(self, key: str) -> Path:
        if not _KEY.match(key):
            raise ValueError("not a content key")
        return self._root / key[:2] / key[2:4] / key

    def put(self, raw: bytes) -> str:
        return self.put_many([raw])[0]

    def put_many(self, raws: Sequence[bytes]) -> list[str]:
        keys: list[str] = []
        written: list[int] = []
        directories: set[Path] = set()
        try:
            for raw in raws:
                key = hashlib.sha256(raw).hexdigest()
                keys.append(key)
                target = self.path_for(key)
                if target.exists() and target.stat().st_size == len(raw):
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
                try:
                    _write_all(fd, raw)
                    os.replace(tmp_name, target)
                except BaseException:
                    os.close(fd)
                    Path(tmp_name).unlink(missing_ok=True)
                    raise
                if self._durable:
                    written.append(fd)
                else:
                    os.close(fd)
                directories.add(target.parent)
            # One flush pass for the whole batch: the caller commits the rows that name these
            # files only after this returns, so a row never outlives its content on disk.
            for fd in written:
                os.fsync(fd)
            if self._durable:
                for directory in directories:
                    _fsync_dir(directory)
        finally:
            for fd in written:
                os.close(fd)
        return keys

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


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
