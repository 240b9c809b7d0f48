"""Files a message carries, and where their octets come from: a part of a stored message, or
a file under a directory the operator allows.

Both the sending side (a forward's files, files attached by reference) and the reading side
(saving a part of a stored email) use these, so they live here rather than in a slice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class StoredPart:
    """A part of a stored message as a forward carries it on: its octets (an encapsulated
    message as it was written, anything else with its transfer encoding undone), the
    parameters of its Content-Type in their order, names lower-cased and values decoded,
    and its Content-Transfer-Encoding, lower-cased (None when it names none)."""

    content: bytes
    parameters: tuple[tuple[str, str], ...] = ()
    transfer_encoding: str | None = None


@dataclass(frozen=True, slots=True)
class Attachment:
    """A file a message carries, its octets read and frozen. `parameters` and
    `transfer_encoding` are what the original part said, for a file taken from a stored
    message (see `StoredPart`); "base64" asks for base64 whatever the octets are."""

    file_name: str | None
    media_type: str
    content: bytes
    parameters: tuple[tuple[str, str], ...] = ()
    transfer_encoding: str | None = None


class AttachmentReader(Protocol):
    def read(self, raw: bytes, part_paths: Sequence[str]) -> list[StoredPart]:
        """The parts at `part_paths` (IMAP body-section numbering) of the message `raw`, in
        that order. Raises ValueError for a path the message does not have."""
        ...


class FileNotServed(Exception):
    """The path names no regular file (or, for a file to be written, no directory) reachable
    inside an allowed directory without following a symbolic link."""


class FileOverLimit(Exception):
    """The file holds more octets than the reader was allowed to read; `size` is at least
    how many it holds (the reader stopped there)."""

    def __init__(self, size: int) -> None:
        super().__init__("the file is larger than the limit")
        self.size = size


class FileNameTaken(Exception):
    """Something already exists under the name a file was to be created with."""


class FileRoots(Protocol):
    """The directories of this machine a tool may read files from and write files into.

    Paths are absolute and written without `.` or `..` components; every component below the
    allowed directory is opened without following a symbolic link, so nothing outside it is
    ever read or written."""

    def any_roots(self) -> bool:
        """Whether the operator allowed any directory at all."""
        ...

    def read(self, path: str, limit: int) -> bytes:
        """The octets of the regular file at `path`. Raises `FileNotServed`, or
        `FileOverLimit` when it holds more than `limit` octets (nothing past `limit + 1`
        octets is read)."""
        ...

    def create(self, path: str, content: bytes) -> str:
        """Write `content` to a new file at `path`, whose directory must already exist; never
        replaces anything. Answers the path written. Raises `FileNotServed`, or
        `FileNameTaken` when the name is in use (by anything, a symbolic link included)."""
        ...
