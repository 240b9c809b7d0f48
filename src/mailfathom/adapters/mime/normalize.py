"""From raw RFC 5322 octets to a `NormalizedMessage`, for any input at all.

Parsing yields the stdlib parser's tree with the ``compat32`` policy (well-formed mail takes a
faster route to the identical tree, see `fastparse`): it only splits the message
into header fields and MIME entities, never interprets a header, and so neither raises on
malformed fields nor spends time building structured header objects. The fields this
project needs are decoded by `headers`, the MIME tree is read by `structure`.

Neither entry point raises. A message that cannot be read in full is described with what
could be read, and the reason is recorded among its defects:

- parser defect class names, as the stdlib reports them (``CloseBoundaryNotFoundDefect``);
- ``header:<name>`` for a header field present but unusable (an unparsable Date, an
  address without a mailbox, an encoded word that does not decode);
- ``mime:depth-limit`` / ``mime:part-limit`` when the MIME tree was cut short;
- ``mime:unreadable`` when the body could not be walked at all, and ``message:unreadable``
  when not even the header block could be read.
"""

from __future__ import annotations

from dataclasses import replace
from email import policy
from email.message import Message
from email.parser import BytesParser

from mailfathom.adapters.mime.fastparse import parse_fast
from mailfathom.adapters.mime.headers import HeaderFields, read_header_fields
from mailfathom.adapters.mime.structure import (
    DEPTH_LIMIT_DEFECT,
    MimeContent,
    parser_defects,
    read_content,
)
from mailfathom.domain.message import NormalizedMessage

BODY_UNREADABLE_DEFECT = "mime:unreadable"
MESSAGE_UNREADABLE_DEFECT = "message:unreadable"

_PARSER = BytesParser(policy=policy.compat32)


def normalize_message(raw: bytes) -> NormalizedMessage:
    """Describe a whole message: headers, body text, parts, markers and defects."""
    try:
        return _normalize_message(bytes(raw))
    except Exception:
        return _build(HeaderFields(), [MESSAGE_UNREADABLE_DEFECT], headers_only=False)


def normalize_headers(raw_header: bytes) -> NormalizedMessage:
    """Describe a message from its header block alone (the body is not available).

    Used for messages too large to store: everything that comes from header fields is
    filled in, the body, parts and markers are left empty and ``headers_only`` is set.
    """
    try:
        message = _PARSER.parsebytes(bytes(raw_header), headersonly=True)
        fields = _read_fields(message)
        return _build(fields, _defects(message, fields, None), headers_only=True)
    except Exception:
        return _build(HeaderFields(), [MESSAGE_UNREADABLE_DEFECT], headers_only=True)


def _normalize_message(raw: bytes) -> NormalizedMessage:
    try:
        message = parse_fast(raw) or _PARSER.parsebytes(raw)
    except Exception as error:
        # The stdlib parser recurses once per nesting level; nesting deep enough to exhaust
        # the interpreter's stack is reported as such.
        reason = DEPTH_LIMIT_DEFECT if isinstance(error, RecursionError) else BODY_UNREADABLE_DEFECT
        fallback = normalize_headers(_header_block(raw))
        seen = (*fallback.defects, reason)
        return replace(fallback, defects=tuple(dict.fromkeys(seen)), headers_only=False)
    fields = _read_fields(message)
    content: MimeContent | None
    try:
        content = read_content(message)
    except Exception:
        content = None
    defects = _defects(message, fields, content)
    if content is None:
        defects.append(BODY_UNREADABLE_DEFECT)
        return _build(fields, defects, headers_only=False)
    return NormalizedMessage(
        subject=fields.subject,
        sent_at=fields.sent_at,
        message_id=fields.message_id,
        in_reply_to=fields.in_reply_to,
        references=fields.references,
        participants=fields.participants,
        plain_text=content.plain_text,
        html=content.html,
        parts=content.parts,
        markers=content.markers,
        defects=tuple(defects),
        headers_only=False,
        list_id=fields.list_id,
        authentication_results=fields.authentication_results,
    )


def _read_fields(message: Message) -> HeaderFields:
    try:
        return read_header_fields(message)
    except Exception:
        return HeaderFields(defects=[MESSAGE_UNREADABLE_DEFECT])


def _defects(message: Message, fields: HeaderFields, content: MimeContent | None) -> list[str]:
    try:
        found = parser_defects(message)
    except Exception:
        found = [BODY_UNREADABLE_DEFECT]
    found.extend(fields.defects)
    if content is not None:
        found.extend(content.defects)
    return list(dict.fromkeys(found))


def _build(fields: HeaderFields, defects: list[str], *, headers_only: bool) -> NormalizedMessage:
    return NormalizedMessage(
        subject=fields.subject,
        sent_at=fields.sent_at,
        message_id=fields.message_id,
        in_reply_to=fields.in_reply_to,
        references=fields.references,
        participants=fields.participants,
        plain_text="",
        html=None,
        parts=(),
        markers=frozenset(),
        defects=tuple(dict.fromkeys(defects)),
        headers_only=headers_only,
        list_id=fields.list_id,
        authentication_results=fields.authentication_results,
    )


def _header_block(raw: bytes) -> bytes:
    """The octets up to the first empty line (RFC 5322 section 2.1), however lines end."""
    cut = len(raw)
    for separator in (b"\r\n\r\n", b"\n\n", b"\r\r"):
        index = raw.find(separator)
        if index >= 0:
            cut = min(cut, index)
    return raw[:cut]
