"""Reading single facts off one parsed MIME entity, without ever raising.

The stdlib accessors used here parse header parameters on demand and can fail on what
senders actually write; each accessor answers with a neutral value instead.
"""

from __future__ import annotations

import re
from email.message import Message

from mailfathom.adapters.mime.text import (
    clean_body_text,
    decode_bytes,
    decode_encoded_words,
    header_to_unicode,
    single_line,
    unfold,
)

_META_CHARSET = re.compile(rb"<meta[^>]+charset\s*=\s*[\"']?([A-Za-z0-9_:.\-]+)", re.IGNORECASE)
_META_SCAN_LENGTH = 4096
# The charset parameter of a plain Content-Type value: no RFC 2231 encoding, no comments, no
# escapes. Anything else goes through the stdlib's full parameter parser.
_PLAIN_CHARSET = re.compile(r';\s*charset\s*=\s*(?:"([^"\\]+)"|([^\s;"]+))', re.IGNORECASE)
_MAX_SIZED_ENTITIES = 5000


def media_type(part: Message) -> str:
    """The lower-cased type/subtype, with RFC 2045 section 5.2 defaults applied."""
    try:
        return part.get_content_type().lower()
    except Exception:
        return "application/octet-stream"


def disposition(part: Message) -> str | None:
    """``inline``, ``attachment`` or None (RFC 2183 section 2)."""
    try:
        return part.get_content_disposition()
    except Exception:
        return None


def param(part: Message, name: str) -> str | None:
    """A Content-Type parameter, decoded and lower-cased (for comparisons only)."""
    try:
        value = part.get_param(name)
    except Exception:
        return None
    if isinstance(value, tuple):
        value = value[2]
    if not isinstance(value, str):
        return None
    return header_to_unicode(value).strip().lower()


def file_name(part: Message) -> str | None:
    """The written file name: RFC 2183 ``filename``, else the Content-Type ``name``.

    RFC 2231 parameter encoding is undone by the stdlib; RFC 2047 encoded words, which
    RFC 2047 section 5 does not allow in parameters but many senders use, are decoded too.
    """
    try:
        raw = part.get_filename()
    except Exception:
        return None
    if raw is None:
        return None
    name, _ = decode_encoded_words(unfold(header_to_unicode(str(raw))))
    return name


def content_id(part: Message) -> str | None:
    """The Content-ID (RFC 2045 section 7) without angle brackets or whitespace."""
    raw = part.get("content-id")
    if raw is None:
        return None
    text = "".join(single_line(header_to_unicode(str(raw))).split())
    return text.strip("<>") or None


def decode_text(part: Message, subtype_is_html: bool) -> str:
    """The text of a text part, its transfer encoding and charset undone.

    An HTML part without a charset parameter may declare one in a ``<meta>`` element
    (HTML Living Standard, "determining the character encoding"); it is honoured then.
    """
    payload = part.get_payload(decode=True)
    data = payload if isinstance(payload, bytes) else b""
    charset = _charset(part)
    if charset is None and subtype_is_html:
        match = _META_CHARSET.search(data, 0, _META_SCAN_LENGTH)
        if match:
            charset = match.group(1).decode("ascii")
    return clean_body_text(decode_bytes(data, charset))


def _charset(part: Message) -> str | None:
    """The Content-Type charset, lower-cased, as `Message.get_content_charset` reads it."""
    header = part.get("content-type")
    if isinstance(header, str) and not any(c in header for c in "*\\("):
        found: list[tuple[str, str]] = _PLAIN_CHARSET.findall(header)
        quotes = header.count('"')
        if len(found) == 1 and (quotes == 0 or (quotes == 2 and found[0][0])):
            value = found[0][0] or found[0][1]
            if value.isascii():
                return value.lower()
    try:
        charset: str | None = part.get_content_charset()
    except Exception:
        return None
    return charset


def decoded_size(part: Message) -> int:
    """Octets of the part once its transfer encoding (RFC 2045 section 6) is undone.

    An encapsulated message has no transfer encoding to undo (RFC 2046 section 5.2.1
    allows only 7bit, 8bit and binary); its size is that of the message as written,
    reconstructed from the parsed tree rather than by serializing it again, which is
    costly for deep nesting. Line ends and header spacing can make it differ from the
    original by a few octets.
    """
    try:
        payload = part.get_payload(decode=True)
        if isinstance(payload, bytes):
            return len(payload)
        inner = part.get_payload()
        if isinstance(inner, list):
            return sum(_written_size(child) for child in inner if isinstance(child, Message))
    except Exception:
        return 0
    return 0


def _written_size(entity: Message) -> int:
    total = 0
    stack = [entity]
    visited = 0
    while stack and visited < _MAX_SIZED_ENTITIES:
        node = stack.pop()
        visited += 1
        total += sum(len(name) + len(str(value)) + 4 for name, value in node.raw_items()) + 2
        payload = node.get_payload()
        if isinstance(payload, str):
            total += len(payload)
            continue
        if not isinstance(payload, list):
            continue
        children = [child for child in payload if isinstance(child, Message)]
        boundary = node.get_boundary() if node.get_content_maintype() == "multipart" else None
        if boundary is not None:
            total += (len(boundary) + 6) * (len(children) + 1)
            total += len(node.preamble or "") + len(node.epilogue or "")
        stack.extend(children)
    return total
