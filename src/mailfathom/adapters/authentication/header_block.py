"""The message's own header fields, top to bottom, read within bounds.

Only the top-level header block is read (RFC 5322 section 2.1: the fields before the first
empty line). A field inside a MIME part, or in an attached message, is body text as far as
the receiving server is concerned, and nothing it says is a statement about this message.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_HEADER_FIELDS = 500
"""How many header fields, counted from the top, are looked at. A receiving server prepends
its own fields, so the ones a verdict needs sit near the top; a message carrying thousands of
fields is read no further than this, whatever it carries below."""

MAX_KEPT_FIELD_CHARS = 16_384
"""How much of one field is kept. Longer fields keep their first part and their full length,
so a reader with a tighter bound of its own can tell it was exceeded and ignore the field."""


@dataclass(frozen=True, slots=True)
class HeaderField:
    """One unfolded header field: `name` lower-cased, `value` at most `MAX_KEPT_FIELD_CHARS`
    characters, `length` the full unfolded length of the value."""

    name: str
    value: str
    length: int


def header_fields(raw: bytes, *, limit: int = MAX_HEADER_FIELDS) -> list[HeaderField]:
    """The first `limit` header fields of `raw`, top first."""
    fields: list[HeaderField] = []
    name: str | None = None
    parts: list[bytes] = []
    for line in _header_lines(raw):
        if line[:1] in (b" ", b"\t") and name is not None:
            parts.append(line)
            continue
        if name is not None:
            fields.append(_field(name, parts))
            name = None
            if len(fields) >= limit:
                return fields
        head, colon, rest = line.partition(b":")
        if not colon or not head or head != head.strip() or not head.isascii():
            continue
        name = head.decode("ascii").lower()
        parts = [rest]
    if name is not None and len(fields) < limit:
        fields.append(_field(name, parts))
    return fields


def _header_lines(raw: bytes) -> list[bytes]:
    if raw.startswith((b"\n", b"\r\n")):
        return []
    end = raw.find(b"\n\n")
    crlf_end = raw.find(b"\r\n\r\n")
    if crlf_end != -1 and (end == -1 or crlf_end < end):
        end = crlf_end
    block = raw if end == -1 else raw[:end]
    return [line.rstrip(b"\r") for line in block.split(b"\n")]


def _field(name: str, parts: list[bytes]) -> HeaderField:
    text = b" ".join(part.strip(b" \t") for part in parts)
    value = text.decode("utf-8", errors="replace")
    return HeaderField(name=name, value=value[:MAX_KEPT_FIELD_CHARS], length=len(value))


def values_of(fields: list[HeaderField], name: str) -> list[str]:
    return [field.value for field in fields if field.name == name]
