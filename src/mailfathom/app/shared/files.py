"""Files a message carries, and reading them out of a stored message.

Both sending and reading reach these (a forward's files, and the parts of a stored email), so
they live here rather than in a slice.
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
    """A file a message carries. `parameters` and `transfer_encoding` are what the original
    part said, for a file taken from a stored message (see `StoredPart`)."""

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
