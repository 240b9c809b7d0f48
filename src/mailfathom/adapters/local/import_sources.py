"""Mail to import, read from what a user already has: a Maildir, a folder of `.eml` files,
one `.eml` file or an mbox file.

Each message is handed over as the source holds it, byte for byte, so importing the same
source again yields the same bytes. Its arrival time is the source's own record of it: the
mbox `From ` line, else the first hop's `Received:` header (the bottom-most), else the Maildir
file's time, else the `Date:` header.
"""

from __future__ import annotations

import mailbox
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from email.message import Message
from email.parser import BytesHeaderParser
from email.policy import compat32
from email.utils import parsedate_to_datetime
from pathlib import Path

from mailfathom.domain.errors import ImportSourceRefused

_HEADER_LINE = re.compile(rb"[\x21-\x39\x3b-\x7e]+[ \t]*:")
_MAILDIR_FLAGS = "SFRDT"
_SHAPES = (
    "a Maildir holds cur/ or new/, a folder holds .eml files, and a file is one message or "
    "an mbox whose first line starts with 'From '"
)


@dataclass(frozen=True, slots=True)
class SourceMessage:
    raw: bytes
    flags: str
    received_at: datetime | None


def _instant(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        value = parsedate_to_datetime(" ".join(text.split()))
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except (ValueError, OverflowError):
        return None


def _headers(raw: bytes) -> Message:
    return BytesHeaderParser(policy=compat32).parsebytes(raw)


def _first_hop(headers: Message) -> datetime | None:
    """The time the bottom-most `Received:` header carries (after its last semicolon), the one
    the first server added; a header whose date cannot be read is passed over for the next."""
    for value in reversed(headers.get_all("Received") or []):
        text = str(value)
        if ";" in text:
            found = _instant(text.rsplit(";", 1)[1])
            if found is not None:
                return found
    return None


def _file_time(path: Path) -> datetime:
    return datetime.fromtimestamp(path.stat().st_mtime, UTC)


def _arrival(
    raw: bytes, *, envelope: datetime | None = None, file_time: datetime | None = None
) -> datetime | None:
    if envelope is not None:
        return envelope
    headers = _headers(raw)
    return _first_hop(headers) or file_time or _instant(headers.get("Date"))


def _looks_like_a_message(raw: bytes) -> bool:
    return _HEADER_LINE.match(raw) is not None


def _maildir(root: Path) -> Iterator[SourceMessage]:
    for sub in ("new", "cur"):
        folder = root / sub
        if not folder.is_dir():
            continue
        for entry in sorted(os.scandir(folder), key=lambda e: e.name):
            if entry.name.startswith(".") or not entry.is_file():
                continue
            info = entry.name.split(":2,", 1)[1] if ":2," in entry.name else ""
            path = Path(entry.path)
            raw = path.read_bytes()
            flags = "".join(sorted({c for c in info if c in _MAILDIR_FLAGS}))
            yield SourceMessage(raw, flags, _arrival(raw, file_time=_file_time(path)))


def _single(path: Path) -> SourceMessage:
    raw = path.read_bytes()
    if not _looks_like_a_message(raw):
        raise ImportSourceRefused(f"A file to import is not a message: {_SHAPES}.")
    return SourceMessage(raw, "", _arrival(raw, file_time=None) or _file_time(path))


def _mbox(path: Path) -> Iterator[SourceMessage]:
    box = mailbox.mbox(path, create=False)
    try:
        for key in box.iterkeys():
            with box.get_file(key, from_=True) as handle:
                data = handle.read()
            from_line, _, raw = data.partition(b"\n")
            envelope = from_line.decode("ascii", "replace").split(None, 2)
            headers = _headers(raw)
            status = str(headers.get("Status", "")) + str(headers.get("X-Status", ""))
            flags = ("F" if "F" in status else "") + ("S" if "R" in status else "")
            when = _instant(envelope[2]) if len(envelope) == 3 else None
            yield SourceMessage(raw, flags, _arrival(raw, envelope=when))
    finally:
        box.close()


def read_source(source: Path) -> Iterator[SourceMessage]:
    """Every message of `source`; `ImportSourceRefused` when it is none of the shapes above
    (the error names the rule, never the path or anything the files hold)."""
    if not source.exists():
        raise ImportSourceRefused(f"The import source does not exist: {_SHAPES}.")
    try:
        if source.is_dir():
            if (source / "cur").is_dir() or (source / "new").is_dir():
                yield from _maildir(source)
                return
            files = sorted(
                p for p in source.iterdir() if p.suffix.lower() == ".eml" and p.is_file()
            )
            if not files:
                raise ImportSourceRefused(f"The import folder holds no mail: {_SHAPES}.")
            for path in files:
                yield _single(path)
            return
        with open(source, "rb") as handle:
            start = handle.read(5)
        if start == b"From " or not start:
            yield from _mbox(source)
        else:
            yield _single(source)
    except OSError as error:
        raise ImportSourceRefused("A file of the import source could not be read.") from error
