"""Reading stored parts back out of a raw message by their section numbers (RFC 3501 section
6.4.5), as `structure` numbered them when the message was stored, with what a forward needs
to send each on as it was: its Content-Type parameters and its transfer encoding."""

from __future__ import annotations

import re
from collections.abc import Sequence
from email import message_from_bytes, policy
from email.message import Message
from typing import cast

from mailfathom.app.shared.files import StoredPart

# An encapsulated message is written back out with its own header lines as they were, not
# folded again, and with CRLF line ends.
_AS_WRITTEN = policy.default.clone(refold_source="none", linesep="\r\n")
_LINE_BREAK = re.compile(r"[\r\n]")


def _at(message: Message, path: str) -> Message:
    part = message
    for number in path.split("."):
        index = int(number) - 1
        if part.is_multipart():
            children = part.get_payload()
            if not isinstance(children, list) or not 0 <= index < len(children):
                raise ValueError("the message has no part at that section")
            part = cast(Message, children[index])
        elif index != 0:
            raise ValueError("the message has no part at that section")
    return part


def _octets(part: Message) -> bytes:
    """The decoded body of a leaf; for an encapsulated message the message itself, and for
    another entity whose body the parser read as header blocks (message/delivery-status)
    those blocks, both as written."""
    inner = part.get_payload()
    if isinstance(inner, list):
        if part.get_content_type() == "message/rfc822" and inner:
            return bytes(cast(Message, inner[0]).as_bytes(policy=_AS_WRITTEN))
        written = bytes(part.as_bytes(policy=_AS_WRITTEN))
        return written.partition(b"\r\n\r\n")[2]
    decoded = part.get_payload(decode=True)
    return decoded if isinstance(decoded, bytes) else b""


def _parameters(part: Message) -> tuple[tuple[str, str], ...]:
    """The Content-Type parameters, RFC 2231 encoding undone, as the standard library's
    header parser reads them."""
    value = part.get("content-type")
    if value is None:
        return ()
    try:
        text = _LINE_BREAK.sub("", str(value))
        header = policy.default.header_factory("content-type", text)
        return tuple((str(k), str(v)) for k, v in header.params.items())
    except Exception:
        return ()


def _transfer_encoding(part: Message) -> str | None:
    value = part.get("content-transfer-encoding")
    return str(value).strip().lower() or None if value is not None else None


class MimeAttachmentReader:
    def read(self, raw: bytes, part_paths: Sequence[str]) -> list[StoredPart]:
        message = message_from_bytes(raw, policy=policy.compat32)
        found = []
        for path in part_paths:
            part = _at(message, path)
            found.append(StoredPart(_octets(part), _parameters(part), _transfer_encoding(part)))
        return found
