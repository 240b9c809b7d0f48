"""Reading stored parts back out of a raw message by their section numbers (RFC 3501 section
6.4.5), as `structure` numbered them when the message was stored."""

from __future__ import annotations

from collections.abc import Sequence
from email import message_from_bytes, policy
from email.message import Message
from typing import cast


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
    if part.get_content_type() == "message/rfc822" or part.is_multipart():
        inner = part.get_payload()
        if isinstance(inner, list) and inner and part.get_content_type() == "message/rfc822":
            return bytes(cast(Message, inner[0]).as_bytes(policy=policy.compat32))
        return bytes(part.as_bytes(policy=policy.compat32))
    decoded = part.get_payload(decode=True)
    return decoded if isinstance(decoded, bytes) else b""


class MimeAttachmentReader:
    def read(self, raw: bytes, part_paths: Sequence[str]) -> list[bytes]:
        message = message_from_bytes(raw, policy=policy.compat32)
        return [_octets(_at(message, path)) for path in part_paths]
