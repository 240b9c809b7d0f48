"""Parsing the few FETCH and SEARCH answers the bulk paths read without imapclient's parser.

imapclient parses every FETCH response into Python values, which costs several times what the
transfer does on a fast server; the bulk paths ask for a fixed set of items and read them with
these small, strict parsers instead (RFC 3501 section 7.4.2, RFC 7162 section 3.1.4).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from mailfathom.domain.content_state import RemoteFlags

_UID = re.compile(rb"\bUID (\d+)")
_SIZE = re.compile(rb"\bRFC822\.SIZE (\d+)")
_MODSEQ = re.compile(rb"\bMODSEQ \((\d+)\)")
_FLAGS = re.compile(rb"\bFLAGS \(([^)]*)\)")
_INTERNALDATE = re.compile(rb'\bINTERNALDATE "([^"]+)"')
_QUOTED_HEADER_FIELDS = re.compile(rb'\bBODY\[HEADER\.FIELDS \([^)]*\)\] "((?:[^"\\]|\\.)*)"', re.I)
_QUOTED_CHAR = re.compile(rb"\\(.)")
_MESSAGE_ID = re.compile(rb"^message-id:[ \t]*(.*(?:\r?\n[ \t].*)*)", re.IGNORECASE | re.MULTILINE)


class FetchItems:
    """The non-literal items of one FETCH response, read from its text around the literal."""

    __slots__ = ("flags", "internaldate", "modseq", "size", "uid")

    def __init__(self, text: bytes) -> None:
        uid = _UID.search(text)
        self.uid = int(uid.group(1)) if uid else None
        size = _SIZE.search(text)
        self.size = int(size.group(1)) if size else None
        modseq = _MODSEQ.search(text)
        self.modseq = int(modseq.group(1)) if modseq else None
        flags = _FLAGS.search(text)
        self.flags = _remote_flags(flags.group(1)) if flags else None
        date = _INTERNALDATE.search(text)
        self.internaldate = parse_internaldate(date.group(1)) if date else None


# Flag lists repeat from message to message, and the values are immutable.
_KNOWN_FLAGS: dict[bytes, RemoteFlags] = {}
_KNOWN_FLAGS_LIMIT = 4096


def _remote_flags(names: bytes) -> RemoteFlags:
    found = _KNOWN_FLAGS.get(names)
    if found is None:
        found = RemoteFlags.from_names(names.decode("utf-8", "replace").split())
        if len(_KNOWN_FLAGS) < _KNOWN_FLAGS_LIMIT:
            _KNOWN_FLAGS[names] = found
    return found


_MONTHS = {
    m: i + 1
    for i, m in enumerate(
        ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
    )
}


def parse_internaldate(value: bytes) -> datetime | None:
    """date-time per RFC 3501 section 9: "17-Jul-1996 02:44:25 -0700", day may be space-led.

    Read by hand: strptime costs more than the rest of a FETCH response's parsing."""
    try:
        date, clock, zone = value.decode("ascii").split()
        day, month, year = date.split("-")
        hour, minute, second = clock.split(":")
        sign = -1 if zone[0] == "-" else 1
        offset = timedelta(hours=int(zone[1:3]), minutes=int(zone[3:5])) * sign
        return datetime(
            int(year),
            _MONTHS[month.capitalize()],
            int(day),
            int(hour),
            int(minute),
            int(second),
            tzinfo=timezone(offset),
        )
    except (ValueError, KeyError, IndexError, UnicodeDecodeError):
        return None


def parse_uid_set(text: str) -> list[int]:
    """Expand a sequence-set such as "1:3,7" (RFC 3501 section 9) into ascending UIDs."""
    result: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if ":" in part:
            low, high = (int(x) for x in part.split(":", 1))
            if low > high:
                low, high = high, low
            result.extend(range(low, high + 1))
        else:
            result.append(int(part))
    return sorted(set(result))


def compress_uids(uids: list[int] | tuple[int, ...]) -> str:
    """The shortest sequence-set naming exactly these UIDs."""
    ordered = sorted(set(uids))
    ranges: list[str] = []
    start = prev = ordered[0]
    for uid in ordered[1:]:
        if uid == prev + 1:
            prev = uid
            continue
        ranges.append(f"{start}:{prev}" if prev != start else str(start))
        start = prev = uid
    ranges.append(f"{start}:{prev}" if prev != start else str(start))
    return ",".join(ranges)


def message_id_from_header(block: bytes) -> str | None:
    match = _MESSAGE_ID.search(block)
    if not match:
        return None
    value = re.sub(rb"\s+", b" ", match.group(1)).strip()
    return value.decode("utf-8", "replace") or None


def header_fields(text: bytes, literal: bytes | None) -> bytes | None:
    """The octets of the one BODY[HEADER.FIELDS (...)] item of a FETCH response, or None
    where the server answered NIL or left the item out. That is a message it could no longer
    read: one another session expunged before this one was told (Dovecot answers NIL then,
    with RFC822.SIZE 0). A message whose header lacks the fields comes as a blank line."""
    if literal is not None:
        return literal
    quoted = _QUOTED_HEADER_FIELDS.search(text)
    return _QUOTED_CHAR.sub(rb"\1", quoted.group(1)) if quoted else None
