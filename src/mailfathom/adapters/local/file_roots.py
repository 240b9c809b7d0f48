"""The directories of this machine a tool may read a file from or write a file into
(`MailDelivery.AttachmentRoots`), reached without ever leaving them.

A path is matched against the roots as written (absolute, no `.` or `..` components), and
everything below the root is walked one component at a time with directory descriptors:
each directory is opened relative to its parent's descriptor with `O_NOFOLLOW |
O_DIRECTORY`, so a symbolic link anywhere below the root (a file or a directory component)
ends the walk instead of being followed, and nothing renamed or swapped meanwhile can lead
the walk outside: every step is relative to a directory already open inside the root. The
root itself is opened as the operator wrote it (a link there is the operator's choice).

A file to be read is first looked at without following a link (`fstatat`) and opened only
when that says it is a regular file, so a device, a FIFO or a socket is never opened; it is
then opened with `O_NOFOLLOW | O_NONBLOCK` (a FIFO swapped in between cannot block the open)
and `fstat` on the open descriptor must again say regular file, with the same device and
inode, before a byte is read. Reading stops one octet past the limit.

A file to be written is created with `O_CREAT | O_EXCL | O_NOFOLLOW` relative to its
directory's descriptor: an existing name (a dangling link included) is refused, never
replaced, and the directory must already exist. The file is written, flushed to disk, and
removed again if writing fails; its mode is 0600 (owner only) under the process umask.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Sequence

from mailfathom.app.shared.files import FileNameTaken, FileNotServed, FileOverLimit

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_CHUNK = 1 << 20


def _components(path: str) -> list[str]:
    return [p for p in path.split("/") if p]


class LocalFileRoots:
    def __init__(self, roots: Sequence[str]) -> None:
        # The longest root first, so a root inside another is the one a path is walked from.
        self._roots = sorted(
            (_components(r) for r in roots), key=lambda parts: len(parts), reverse=True
        )

    def any_roots(self) -> bool:
        return bool(self._roots)

    def read(self, path: str, limit: int) -> bytes:
        root, below = self._locate(path)
        directory = self._walk(root, below[:-1])
        try:
            try:
                seen = os.stat(below[-1], dir_fd=directory, follow_symlinks=False)
                if not stat.S_ISREG(seen.st_mode):
                    raise FileNotServed()
                flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
                descriptor = os.open(below[-1], flags, dir_fd=directory)
            except OSError:
                raise FileNotServed() from None
        finally:
            os.close(directory)
        try:
            opened = os.fstat(descriptor)
            if not stat.S_ISREG(opened.st_mode) or (opened.st_dev, opened.st_ino) != (
                seen.st_dev,
                seen.st_ino,
            ):
                raise FileNotServed()
            if opened.st_size > limit:
                raise FileOverLimit(opened.st_size)
            return _read_at_most(descriptor, limit)
        finally:
            os.close(descriptor)

    def create(self, path: str, content: bytes) -> str:
        root, below = self._locate(path)
        directory = self._walk(root, below[:-1])
        name = below[-1]
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_NOCTTY
            try:
                descriptor = os.open(name, flags | os.O_CLOEXEC, 0o600, dir_fd=directory)
            except FileExistsError:
                raise FileNameTaken() from None
            except OSError:
                raise FileNotServed() from None
            try:
                _write_all(descriptor, content)
                os.fsync(descriptor)
            except BaseException:
                os.close(descriptor)
                descriptor = -1
                with contextlib.suppress(OSError):
                    os.unlink(name, dir_fd=directory)
                raise
            finally:
                if descriptor >= 0:
                    os.close(descriptor)
            os.fsync(directory)
        finally:
            os.close(directory)
        return "/" + "/".join([*root, *below])

    def _locate(self, path: str) -> tuple[list[str], list[str]]:
        """(the root, the components below it); the path must name something below one."""
        if not path.startswith("/") or "\x00" in path:
            raise FileNotServed()
        parts = _components(path)
        if any(p in (".", "..") for p in parts):
            raise FileNotServed()
        for root in self._roots:
            if len(parts) > len(root) and parts[: len(root)] == root:
                return root, parts[len(root) :]
        raise FileNotServed()

    @staticmethod
    def _walk(root: list[str], directories: list[str]) -> int:
        """A descriptor of the directory `directories` names below `root`, each component
        opened relative to the one before without following a link."""
        try:
            descriptor = os.open("/" + "/".join(root), _DIRECTORY)
        except OSError:
            raise FileNotServed() from None
        try:
            for name in directories:
                child = os.open(name, _DIRECTORY | os.O_NOFOLLOW, dir_fd=descriptor)
                os.close(descriptor)
                descriptor = child
        except OSError:
            os.close(descriptor)
            raise FileNotServed() from None
        return descriptor


def _read_at_most(descriptor: int, limit: int) -> bytes:
    """The file's octets; `FileOverLimit` as soon as more than `limit` have been read."""
    chunks: list[bytes] = []
    taken = 0
    while True:
        chunk = os.read(descriptor, min(_CHUNK, limit + 1 - taken))
        if not chunk:
            return b"".join(chunks)
        taken += len(chunk)
        if taken > limit:
            raise FileOverLimit(taken)
        chunks.append(chunk)


def _write_all(descriptor: int, content: bytes) -> None:
    view = memoryview(content)
    while view:
        written = os.write(descriptor, view)
        view = view[written:]
