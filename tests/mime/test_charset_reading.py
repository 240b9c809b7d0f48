"""The charset of a text part is read as the stdlib reads it, fast route or not."""

from __future__ import annotations

from email import message_from_bytes, policy
from email.message import Message
from pathlib import Path

import pytest

from mailfathom.adapters.mime.entity import _charset


def _part(content_type: str) -> Message:
    raw = f"Content-Type: {content_type}\r\n\r\nbody\r\n".encode("latin-1")
    return message_from_bytes(raw, policy=policy.compat32)


@pytest.mark.parametrize(
    "content_type",
    [
        "text/plain",
        "text/plain; charset=UTF-8",
        'text/plain; charset="ISO-8859-1"',
        "text/plain;charset=us-ascii; format=flowed",
        "text/plain; format=flowed; CHARSET = Windows-1252",
        'text/plain; name="a;charset=koi8-r"; charset=utf-8',
        "text/plain; charset*=utf-8''iso-8859-2",
        "text/plain; charset=utf-8 (comment)",
        'text/plain; charset="utf\\-8"',
        "text/plain; charset=utf-8; charset=latin1",
        'text/plain; charset=""',
        "text/plain; charset=\u00e9t\u00e9",
    ],
)
def test_tricky_content_types_agree_with_the_stdlib(content_type: str) -> None:
    part = _part(content_type)
    assert _charset(part) == part.get_content_charset()


@pytest.mark.soak
def test_every_corpus_text_part_agrees_with_the_stdlib(corpora: Path) -> None:
    checked = 0
    for path in sorted((corpora / "messages").rglob("*")):
        if not path.is_file():
            continue
        message = message_from_bytes(path.read_bytes(), policy=policy.compat32)
        for part in message.walk():
            if part.get_content_maintype() != "text":
                continue
            try:
                expected = part.get_content_charset()
            except Exception:
                expected = None  # what the reader falls back to
            assert _charset(part) == expected, path.relative_to(corpora)
            checked += 1
    assert checked > 1000
