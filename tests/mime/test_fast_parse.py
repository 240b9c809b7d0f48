"""The fast route yields exactly the stdlib parser's tree, or declines."""

from __future__ import annotations

import mailbox
from collections.abc import Callable
from email import policy
from email.message import Message
from email.parser import BytesParser
from pathlib import Path

import pytest

from mailfathom.adapters.mime.fastparse import parse_fast

STDLIB = BytesParser(policy=policy.compat32)


def difference(ours: Message, theirs: Message, where: str = "message") -> str | None:
    """Where two trees differ, or None when they are the same."""
    if ours.items() != theirs.items():
        return f"{where}: header fields"
    for name in [*theirs.keys(), "content-type", "X-Not-There"]:
        for asked in (name, name.upper(), name.lower()):
            if str(ours.get(asked, "-")) != str(theirs.get(asked, "-")):
                return f"{where}: get({asked!r})"
            if (asked in ours) != (asked in theirs):
                return f"{where}: {asked!r} in"
    for attribute in ("preamble", "epilogue"):
        if getattr(ours, attribute) != getattr(theirs, attribute):
            return f"{where}: {attribute}"
    if ours.get_unixfrom() != theirs.get_unixfrom():
        return f"{where}: envelope line"
    if ours.get_default_type() != theirs.get_default_type():
        return f"{where}: default type"
    mine, stdlib = ours._payload, theirs._payload  # type: ignore[attr-defined]
    if isinstance(mine, list) and isinstance(stdlib, list):
        if len(mine) != len(stdlib):
            return f"{where}: number of parts"
        for index, (a, b) in enumerate(zip(mine, stdlib, strict=True)):
            found = difference(a, b, f"{where}.{index + 1}")
            if found:
                return found
        return None
    return None if mine == stdlib else f"{where}: payload"


def stdlib_defects(message: Message) -> list[str]:
    found = [type(d).__name__ for d in message.defects]
    payload = message._payload  # type: ignore[attr-defined]
    if isinstance(payload, list):
        for part in payload:
            found += stdlib_defects(part)
    return found


def check(raw: bytes) -> str | None:
    fast = parse_fast(raw)
    if fast is None:
        return None
    stdlib = STDLIB.parsebytes(raw)
    if stdlib_defects(stdlib):
        return "took the fast route on a message the stdlib parser finds defects in"
    return difference(fast, stdlib)


NESTED = (
    b"From: a@example.org\r\nSubject: nested\r\nMIME-Version: 1.0\r\n"
    b'Content-Type: multipart/mixed; boundary="outer"\r\n\r\n'
    b"preamble line\r\n"
    b"--outer\r\n"
    b'Content-Type: multipart/alternative; boundary="inner"\r\n\r\n'
    b"--inner\r\nContent-Type: text/plain\r\n\r\nplain\r\n\r\n"
    b"--inner\r\nContent-Type: text/html\r\n\r\n<p>html</p>\r\n"
    b"--inner--\r\ninner epilogue\r\n"
    b"--outer\r\nContent-Type: message/rfc822\r\n\r\n"
    b"Subject: attached\r\n\r\nattached body\r\n\r\n"
    b"--outer--  \r\nouter epilogue\r\n"
)


def test_a_nested_message_takes_the_fast_route_to_the_same_tree() -> None:
    assert parse_fast(NESTED) is not None
    assert check(NESTED) is None


@pytest.mark.parametrize(
    "raw",
    [
        b"From someone@example.org Mon Jan  1 00:00:00 2024\nSubject: envelope\n\nbody\n",
        b"Subject: no body at all\r\nTo: a@example.org",
        b"Subject: \r\n  folded after nothing\r\nTo:\ta@example.org \r\n\r\nbody\r\n",
        "Subject: caf\u00e9 8-bit\nTo: a@example.org\nSubject: second\n\nbody\n".encode(),
        b"Subject: only header lines, LF\n\n",
    ],
)
def test_header_blocks_of_every_shape_read_as_the_stdlib_reads_them(raw: bytes) -> None:
    assert parse_fast(raw) is not None
    assert check(raw) is None


def test_field_look_ups_follow_changes_made_after_parsing() -> None:
    raw = NESTED
    ours, theirs = parse_fast(raw), STDLIB.parsebytes(raw)
    assert ours is not None
    changes: tuple[Callable[[Message], object], ...] = (
        lambda m: m.replace_header("Subject", "replaced"),
        lambda m: m.__delitem__("mime-version"),
        lambda m: m.__setitem__("X-Added", "added"),
        lambda m: m.set_boundary("changed"),
    )
    for change in changes:
        change(ours)
        change(theirs)
        assert difference(ours, theirs) is None
    assert ours["subject"] == "replaced"
    assert "MIME-Version" not in ours


def test_the_media_type_follows_changes_made_after_parsing() -> None:
    ours, theirs = parse_fast(NESTED), STDLIB.parsebytes(NESTED)
    assert ours is not None
    assert ours.get_content_type() == theirs.get_content_type()  # worked out once, kept
    changes: tuple[Callable[[Message], object], ...] = (
        lambda m: m.set_type("text/html"),
        lambda m: m.set_param("charset", "utf-8"),
        lambda m: m.__delitem__("content-type"),
        lambda m: m.set_default_type("message/rfc822"),
        lambda m: m.__setitem__("Content-Type", "image/png"),
        lambda m: m.replace_header("Content-Type", "audio/ogg"),
    )
    for change in changes:
        change(ours)
        change(theirs)
        assert ours.get_content_type() == theirs.get_content_type()
        assert ours.get_content_maintype() == theirs.get_content_maintype()
    untyped = parse_fast(b"Subject: no type\r\n\r\nbody\r\n")
    assert untyped is not None
    assert untyped.get_content_type() == "text/plain"
    untyped.set_default_type("message/rfc822")  # as a digest's parts have
    assert untyped.get_content_type() == "message/rfc822"


@pytest.mark.parametrize(
    "raw",
    [
        NESTED.replace(b"--outer--  \r\n", b""),  # no closing delimiter
        NESTED.replace(b'; boundary="outer"', b""),  # no boundary parameter
        NESTED.replace(b"preamble line\r\n", b"preamble\rline\r\n"),  # lone CR
        b"Subject: x\r\nnot a header line\r\n\r\nbody\r\n",  # no empty line before the body
        b" continued\r\nSubject: x\r\n\r\nbody\r\n",  # continuation without a header
        NESTED.replace(b"multipart/mixed", b"multipart/digest"),
    ],
)
def test_mail_the_fast_route_does_not_reproduce_goes_to_the_stdlib_parser(raw: bytes) -> None:
    assert parse_fast(raw) is None


@pytest.mark.soak
def test_every_corpus_message_parses_identically_or_declines(corpora: Path) -> None:
    problems: list[str] = []
    taken = 0
    for path in sorted((corpora / "messages").rglob("*")):
        if not path.is_file():
            continue
        data = path.read_bytes()
        raws = [data]
        if data.startswith(b"From "):
            try:
                raws = [m.as_bytes() for m in mailbox.mbox(path, create=False)] or [data]
            except Exception:
                raws = [data]
        for raw in raws:
            found = check(raw)
            taken += parse_fast(raw) is not None
            if found:
                problems.append(f"{path.relative_to(corpora)}: {found}")
    assert problems == []
    assert taken > 5000  # the route is actually taken by ordinary mail
