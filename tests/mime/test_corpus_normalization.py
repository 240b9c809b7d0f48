"""Every real message in the shared corpora goes through the normalizer.

The bar for hostile and broken real-world input is no exception and a clear outcome per
message; the known-bad list in MALFORMED_INDEX.md says which inputs make the stdlib's
structured-header policy fail, and each of them must be read here.
"""

from __future__ import annotations

import mailbox
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from mailfathom.adapters.mime import normalize_message
from mailfathom.domain.message import NormalizedMessage

pytestmark = pytest.mark.corpus

_INDEX = Path("messages/torture/MALFORMED_INDEX.md")
_RAISING_SECTION = "## Inputs that raise an exception"


@dataclass(frozen=True)
class _Outcome:
    source: str
    message: NormalizedMessage


def _messages_in(path: Path) -> Iterator[bytes]:
    """The messages a corpus file holds: one, or each message of an mbox file."""
    data = path.read_bytes()
    if not data.startswith(b"From "):
        yield data
        return
    box = mailbox.mbox(path, create=False)
    try:
        for key in box.iterkeys():
            yield box.get_bytes(key)
    finally:
        box.close()


def _malformed_index(corpora: Path) -> tuple[set[str], set[str]]:
    """(every listed path, the paths listed as raising inside the stdlib parser)."""
    listed: set[str] = set()
    raising: set[str] = set()
    in_raising = False
    for line in (corpora / _INDEX).read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            in_raising = line.startswith(_RAISING_SECTION)
            continue
        cells = line.split("|")
        if len(cells) < 3 or not cells[1].strip().startswith("messages/"):
            continue
        path = cells[1].strip()
        listed.add(path)
        if in_raising:
            raising.add(path)
    return listed, raising


@pytest.mark.soak
def test_every_corpus_message_is_normalized_without_an_exception(corpora: Path) -> None:
    outcomes: dict[str, list[_Outcome]] = {}
    failures: list[str] = []
    for path in sorted((corpora / "messages").rglob("*")):
        if not path.is_file():
            continue
        relative = path.relative_to(corpora).as_posix()
        results = outcomes.setdefault(relative, [])
        try:
            for index, data in enumerate(_messages_in(path)):
                source = f"{relative}#{index}"
                try:
                    results.append(_Outcome(source, normalize_message(data)))
                except Exception as error:
                    failures.append(f"{source}: {type(error).__name__}: {error}")
        except Exception as error:
            failures.append(f"{relative}: could not be split: {type(error).__name__}: {error}")

    assert len(outcomes) > 5000, "the corpus looks incomplete"
    assert not failures, f"{len(failures)} messages raised:\n" + "\n".join(failures)

    listed, raising = _malformed_index(corpora)
    assert len(raising) >= 10, "MALFORMED_INDEX.md was not read"
    missing = sorted(listed - outcomes.keys())
    assert not missing, "listed in MALFORMED_INDEX.md but not normalized:\n" + "\n".join(missing)

    unread = [
        path
        for path in sorted(raising)
        if not any(o.message.defects or o.message.participants for o in outcomes[path])
    ]
    assert not unread, "stdlib-raising inputs without a result:\n" + "\n".join(unread)


def test_group_syntax_that_breaks_the_stdlib_keeps_the_other_participants(corpora: Path) -> None:
    data = (corpora / "messages/linux-mips-2005/00120.eml").read_bytes()
    message = normalize_message(data)
    assert message.participants
    assert message.subject
    assert message.sent_at is not None
    assert message.plain_text.strip()


_THUNDERBIRD = Path("messages/thunderbird/mailnews/test/data")
# Inputs whose expected output is the plain text (directly, or the HTML with tags stripped).
_EXPECTED_PLAIN_TEXT = [
    "base64-1",
    "base64-3",
    "basic1",
    "basic3",
    "basic4",
    "basic5",
    "multipart-base64-1",
    "multipart-base64-3",
    "multipart1",
    "multipart3",
    "multipart4",
]
# Inputs whose expected output is the HTML source of the body.
_EXPECTED_HTML = ["base64-2", "basic2", "multipart-base64-2", "multipart2"]
# multipart-complex2 is left out: it reuses an outer boundary inside an inner part, and the
# stdlib parser closes the outer part there, where Thunderbird's parser does not.
# multipart-complex1 is compared on its own below: the expected outputs are what Thunderbird
# takes for a message preview (the first text part), and that message has more inline text.


def _words(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("name", _EXPECTED_PLAIN_TEXT)
def test_thunderbird_expected_body_text_is_reproduced(corpora: Path, name: str) -> None:
    source = corpora / _THUNDERBIRD / name
    expected = (corpora / _THUNDERBIRD / f"{name}.out").read_text(encoding="utf-8")
    message = normalize_message(source.read_bytes())
    assert _words(message.plain_text) == _words(expected)


def test_thunderbird_preview_text_opens_a_body_that_keeps_every_inline_text_part(
    corpora: Path,
) -> None:
    """A multipart/mixed of two binary parts, a multipart/related HTML body and two inline
    text parts (the last without a Content-Type, so text/plain): the preview text comes
    first, the two text parts follow it, the preamble is not body text."""
    source = corpora / _THUNDERBIRD / "multipart-complex1"
    preview = (corpora / _THUNDERBIRD / "multipart-complex1.out").read_text(encoding="utf-8")
    message = normalize_message(source.read_bytes())
    expected = f"{preview} This part shouldn't. Neither should this part!"
    assert _words(message.plain_text) == _words(expected)
    assert message.html is not None
    assert _words(message.html) == _words(
        "<html><head>This part should be returned.</head></html> "
        "<pre>This part shouldn't.</pre> <pre>Neither should this part!</pre>"
    )
    assert [(p.media_type, p.part_path) for p in message.parts] == [
        ("application/octet-stream", "1"),
        ("image/png", "2"),
    ]


@pytest.mark.parametrize("name", _EXPECTED_HTML)
def test_thunderbird_expected_html_body_is_reproduced(corpora: Path, name: str) -> None:
    source = corpora / _THUNDERBIRD / name
    expected = (corpora / _THUNDERBIRD / f"{name}.out").read_text(encoding="utf-8")
    message = normalize_message(source.read_bytes())
    assert message.html is not None
    assert _words(message.html) == _words(expected)
