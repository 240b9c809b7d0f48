"""Small helpers for writing test messages by hand."""

from __future__ import annotations

import base64
import textwrap


def raw(text: str) -> bytes:
    """A message written as an indented literal, with CRLF line ends as on the wire."""
    body = textwrap.dedent(text).lstrip("\n")
    return body.replace("\n", "\r\n").encode("utf-8")


def b64(data: bytes) -> str:
    """Base64 on one line, so it can sit inside an indented message literal."""
    return base64.b64encode(data).decode("ascii")
