"""A faster route to the same message tree the stdlib parser builds, for well-formed mail.

The stdlib feed parser (compat32 policy) reads every line of a message in Python, which makes
it most of the cost of normalization. Well-formed MIME can be split with a few regular
expression scans instead, which run in C: header lines are read exactly as the feed parser
reads them, and bodies are cut at their boundary lines (RFC 2046 section 5.1.1) as whole
slices.

`parse_fast` returns a tree equal to what `BytesParser(policy=compat32).parsebytes` returns —
same headers, payloads, preambles and epilogues — or None whenever the message has anything
the feed parser would record a defect for, or any shape this route does not reproduce
exactly (a lone CR line ending, a multipart/digest, a missing boundary, nesting deeper than a
fixed limit). The caller then uses the stdlib parser, so unusual mail is read exactly as before
and its defects are still recorded. A test compares both routes over the whole shared corpus.
"""

from __future__ import annotations

import itertools
import re
from email import policy
from email.message import Message
from typing import Any, NamedTuple

_COMPAT32 = policy.compat32
_LONE_CR = re.compile(r"\r(?!\n)")
_HEADER_LINE = re.compile(r"(From |[\041-\071\073-\176]*:|[\t ])")
_LINE = re.compile(r"[^\n]*\n|[^\n]+")
_PLAIN_TRANSFER = ("7bit", "8bit", "binary")
MAX_DEPTH = 32


class _NotFast(Exception):
    """The message needs the stdlib parser."""


def parse_fast(raw: bytes) -> Message | None:
    text = raw.decode("ascii", "surrogateescape")
    if "\r" in text and _LONE_CR.search(text):
        return None
    try:
        return _entity(text, 0)
    except (_NotFast, RecursionError):
        return None


def _entity(text: str, depth: int) -> Message:
    if depth > MAX_DEPTH:
        raise _NotFast
    message, body = _headers(text)
    maintype = message.get_content_maintype()
    if maintype == "multipart":
        _multipart(message, body, depth)
    elif maintype == "message":
        if message.get_content_type() == "message/delivery-status":
            raise _NotFast
        message.attach(_entity(body, depth + 1))
    else:
        message.set_payload(body)
    return message


class IndexedMessage(Message):
    """A message tree node that finds a header field by name in one dictionary look-up.

    `Message.get` compares every field name, lower-cased, on each call, and normalization
    asks for the same few fields many times. The index holds each name's first field (the
    one `get` answers with) and is used only while the field list is the one it was built from:
    any change to the fields, by whatever method, falls back to the stdlib's own search."""

    _index: dict[str, tuple[str, str]] | None = None
    _indexed: list[tuple[str, str]] | None = None
    _indexed_count = 0

    def index_fields(self) -> None:
        index: dict[str, tuple[str, str]] = {}
        for name, value in self._headers:  # type: ignore[attr-defined]
            index.setdefault(name.lower(), (name, value))
        fields: list[tuple[str, str]] = self._headers  # type: ignore[attr-defined]
        self._index = index
        self._indexed = fields
        self._indexed_count = len(fields)

    def _usable_index(self) -> dict[str, tuple[str, str]] | None:
        fields = self._headers  # type: ignore[attr-defined]
        if len(fields) == self._indexed_count and fields is self._indexed:
            return self._index
        return None

    def get(self, name: str, failobj: Any = None) -> Any:
        index = self._usable_index()
        if index is None:
            return super().get(name, failobj)
        found = index.get(name.lower())
        if found is None:
            return failobj
        field, value = found
        # The text was decoded from ASCII with escapes for 8-bit octets: a value with any
        # other character holds such escapes, which the policy turns into a Header.
        return value if value.isascii() else self.policy.header_fetch_parse(field, value)

    def __contains__(self, name: str) -> bool:
        index = self._usable_index()
        if index is None:
            return super().__contains__(name)
        return name.lower() in index

    def replace_header(self, _name: str, _value: Any) -> None:
        self._indexed = None
        super().replace_header(_name, _value)

    # Normalization asks a part for its media type about seven times per message; it is
    # worked out once per field list, like the index above.
    _content_type: str | None = None

    def get_content_type(self) -> str:
        if self._usable_index() is None:
            return super().get_content_type()
        found = self._content_type
        if found is None:
            found = self._content_type = super().get_content_type()
        return found

    def set_default_type(self, ctype: str) -> None:
        self._content_type = None
        super().set_default_type(ctype)


# A whole header block of ordinary fields: a name, a colon, the rest of the line and any
# continuation lines, each ended by LF or CRLF.
_FIELD = r"([\041-\071\073-\176]+):([^\n]*\n(?:[ \t][^\n]*\n)*)"
_FIELD_PATTERN = re.compile(_FIELD)
_ORDINARY_BLOCK = re.compile(f"(?:{_FIELD})*")


def _headers(text: str) -> tuple[Message, str]:
    """Header fields as the feed parser reads them, and the body after the empty line."""
    message = IndexedMessage(policy=_COMPAT32)
    end = _ORDINARY_BLOCK.match(text).end()  # type: ignore[union-attr]
    if text.startswith("\r\n", end):
        body = end + 2
    elif text.startswith("\n", end):
        body = end + 1
    else:
        body = -1
    if body >= 0 and not text.startswith("From "):
        # The common case, read in C: exactly what the line by line reading below yields.
        message._headers = [  # type: ignore[attr-defined]
            (name, value.lstrip(" \t").rstrip("\r\n"))
            for name, value in _FIELD_PATTERN.findall(text, 0, end)
        ]
        message.index_fields()
        return message, text[body:]
    return _headers_line_by_line(message, text)


def _headers_line_by_line(message: IndexedMessage, text: str) -> tuple[Message, str]:
    position = 0
    length = len(text)
    current: list[str] = []
    first = True
    while position < length:
        match = _LINE.match(text, position)
        assert match is not None
        line = match.group()
        if line in ("\n", "\r\n"):
            position = match.end()
            break
        if not _HEADER_LINE.match(line):
            raise _NotFast  # no empty line between header and body
        position = match.end()
        if line[0] in " \t":
            if not current:
                raise _NotFast  # continuation without a header
            current.append(line)
            first = False
            continue
        if current:
            message.set_raw(*_COMPAT32.header_source_parse(current))
            current = []
        if line.startswith("From "):
            if not first:
                raise _NotFast
            message.set_unixfrom(_without_line_end(line))
            first = False
            continue
        first = False
        if line[0] == ":":
            raise _NotFast
        current = [line]
    if current:
        message.set_raw(*_COMPAT32.header_source_parse(current))
    message.index_fields()
    return message, text[position:]


def _multipart(message: Message, body: str, depth: int) -> None:
    if message.get_content_type() == "multipart/digest":
        raise _NotFast  # its parts default to message/rfc822
    boundary = message.get_boundary()
    if boundary is None:
        raise _NotFast
    if str(message.get("content-transfer-encoding", "8bit")).lower() not in _PLAIN_TRANSFER:
        raise _NotFast
    lines = _delimiters(body, "--" + boundary)
    if not lines or lines[0].end:
        raise _NotFast  # no opening delimiter
    first = lines[0]
    if first.start > 0:
        message.preamble = _without_line_end(body[: first.start])
    close = None
    parts: list[Message] = []
    for previous, current in itertools.pairwise(lines):
        if current.start == previous.stop:
            raise _NotFast  # an empty part: the feed parser skips delimiters in a row
        part = _entity(body[previous.stop : current.start], depth + 1)
        _strip_last_line_end(part)
        parts.append(part)
        if current.end:
            close = current
            break
    if close is None:
        raise _NotFast  # no closing delimiter
    for part in parts:
        message.attach(part)
    message.epilogue = body[close.stop :] if close.line_end else ""


class _Delimiter(NamedTuple):
    start: int
    stop: int
    end: bool
    line_end: bool


def _delimiters(body: str, separator: str) -> list[_Delimiter]:
    """Every delimiter line: the separator at the start of a line, optionally "--", optional
    blanks, then the line end (or the end of the text), as the feed parser matches them."""
    found: list[_Delimiter] = []
    length = len(body)
    position = body.find(separator)
    while position >= 0:
        if position == 0 or body[position - 1] == "\n":
            cursor = position + len(separator)
            closing = body.startswith("--", cursor)
            if closing:
                cursor += 2
            while cursor < length and body[cursor] in " \t":
                cursor += 1
            if cursor == length:
                found.append(_Delimiter(position, cursor, closing, False))
            elif body[cursor] == "\n":
                found.append(_Delimiter(position, cursor + 1, closing, True))
            elif body.startswith("\r\n", cursor):
                found.append(_Delimiter(position, cursor + 2, closing, True))
        position = body.find(separator, position + 1)
    return found


def _without_line_end(text: str) -> str:
    if text.endswith("\r\n"):
        return text[:-2]
    if text.endswith("\n"):
        return text[:-1]
    return text


def _strip_last_line_end(part: Message) -> None:
    """The line end before a delimiter belongs to the delimiter (RFC 2046 section 5.1.1).

    The feed parser takes it from the entity it created last: the part itself, or for an
    encapsulated message the innermost message it holds."""
    while part.get_content_maintype() == "message":
        inner = part.get_payload()
        if not isinstance(inner, list) or not isinstance(inner[0], Message):
            break
        part = inner[0]
    if part.get_content_maintype() == "multipart":
        epilogue = part.epilogue
        if epilogue == "":
            part.epilogue = None
        elif epilogue is not None:
            part.epilogue = _without_line_end(epilogue)
        return
    # The raw payload, not get_payload(): that re-decodes escaped 8-bit octets.
    payload = part._payload  # type: ignore[attr-defined]
    if isinstance(payload, str):
        part.set_payload(_without_line_end(payload))
