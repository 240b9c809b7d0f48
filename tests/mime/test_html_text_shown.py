"""Every word a browser shows in an HTML body is in its plain text, whatever shape the markup
has: several documents in one part, content outside `<body>`, comments that end early,
markup a browser repairs, nesting deeper than the HTML parser's own limit."""

from __future__ import annotations

import mailbox
from collections.abc import Iterator
from email import message_from_bytes, policy
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mailfathom.adapters.mime import normalize_message
from mailfathom.adapters.mime.text import html_to_text

from .shown_words import WORD, share_kept, shown_words


def _plain(html: str) -> str:
    raw = b"Content-Type: text/html; charset=utf-8\r\n\r\n" + html.encode("utf-8")
    return normalize_message(raw).plain_text


def _deep(opening: str, levels: int) -> str:
    return "<html><body>" + opening * levels + "Main</body></html>\n<p>Shown words</p>"


SHAPES = {
    "after </html>": "<html><body><p>Main</p></body></html>\n<p>Shown words</p>",
    "between </body> and </html>": "<html><body><p>Main</p></body>\nShown words</html>",
    "documents in a row": (
        "<html><head><title>One</title><style>p {}</style></head><body><p>Main</p></body>"
        "</html>\n<!DOCTYPE html><html><head><title>Two</title></head><body><p>Shown words"
        "</p></body></html>"
    ),
    "before <html>": "Shown words\n<html><head><title>T</title></head><body>Main</body></html>",
    "a second <body>": "<html><body><p>Main</p><body bgcolor=white><p>Shown words</p></html>",
    "empty comment <!-->": "<p>Main</p><!-->Shown words<!-- note -->",
    "empty comment <!--->": "<p>Main</p><!--->Shown words",
    "comment closed by --!>": "<p>Main</p><!-- note --!>Shown words",
    "bogus comments": "<p>Main</p><!x>Shown<?php echo 1 ?> words",
    "text in the head": (
        "<html><head><title>T</title>Shown words<meta charset=utf-8></head>"
        "<body><p>Main</p></body></html>"
    ),
    "Office paragraph in the head": (
        "<html><head><title>T</title><o:p>Shown words</o:p></head><body><p>Main</p></body></html>"
    ),
    "unknown element in the head": (
        "<html><head><meta charset=utf-8><xml><p>Shown words</p></xml></head>"
        "<body><p>Main</p></body></html>"
    ),
    "form element in an unclosed head": (
        "<html><head><title>T</title><label>Shown words</label><p>Main</p>"
    ),
    "table cell in an unclosed head": (
        "<html><head><meta charset=utf-8><th>Shown words</th><p>Main</p>"
    ),
    "end tag </br>": "<p>Main</br>Shown words</p>",
    "end tag </p> without a paragraph": "<div>Main</p>Shown words</div>",
    "attribute left open": "<p>Main</p><p <b>Shown words</b></p>",
    "lone less-than sign": "<p>Main < 3 and Shown words</p>",
    "300 unclosed fonts": _deep("<font size=2>", 300),
    "300 nested tables": _deep("<table><tr><td>", 300),
    "3000 unclosed fonts": _deep("<font size=2>", 3000),
}


@pytest.mark.parametrize("html", SHAPES.values(), ids=SHAPES.keys())
def test_every_word_a_browser_shows_is_kept(html: str) -> None:
    assert {"Main", "Shown", "words"} <= set(shown_words(html))
    text = _plain(html)
    kept, shown = share_kept(html, text)
    assert kept == shown, text
    assert text.index("Main") < text.index("Shown") or text.startswith("Shown"), text


def test_a_document_nested_hundreds_deep_keeps_its_lines() -> None:
    html = "<html><body>" + "".join(f"<div>line{n}" for n in range(600)) + "</body></html>"
    assert _plain(html).splitlines() == [f"line{n}" for n in range(600)]


def test_head_content_a_browser_moves_keeps_its_place_before_the_body() -> None:
    html = (
        "<html><head><title>T</title><o:p>First</o:p><style>p {}</style> Second"
        "</head><body><p>Third</p></body></html>"
    )
    assert WORD.findall(_plain(html)) == ["First", "Second", "Third"]


# Markup from real mail, closed elements and the pieces malformed mail is made of.
_PIECES = [
    "<html>", "</html>", "<HTML>", "</HTML >", "<head>", "</head>", "<body>", "</body>",
    "<body bgcolor=white>", "<!DOCTYPE html>", "<?xml version='1.0'?>", "<title>T</title>",
    "<meta charset=utf-8>", "<link rel=x>", "<base href=x>", "<style>p {}</style>",
    "<script>var a = 1;</script>", "<p>", "</p>", "<P>", "</P>", "<div>", "</div>",
    "<center>", "</center>", "<blockquote>", "</blockquote>", "<pre>", "</pre>", "<h1>",
    "</h1>", "<br>", "</br>", "<hr>", "<table>", "</table>", "<tbody>", "<tr>", "</tr>",
    "<td>", "</td>", "<th>", "<caption>", "<ul>", "</ul>", "<ol>", "</ol>", "<li>", "<dl>",
    "<dt>", "<dd>", "<form>", "</form>", "<input>", "<button>", "</button>", "<label>",
    "<font size=2>", "<font color=red>", "</font>", "<b>", "</b>", "<i>", "<u>", "<span>",
    "</span>", "<a href=x>", "</a>", "<img src=x>", "<o:p>", "</o:p>", "<xml>", "</xml>",
    "<marquee>", "</marquee>", "<nobr>", "<wbr>", "<!-- note -->", "<!-->", "<!--->",
    "<!-- note --!>", "<!x>", "<![if !vml]>", "<![endif]>", "<!--[if mso]>", "<![endif]-->",
    "<p <b>", "<span style='display:none'>Hidden</span>", "<div hidden>Hidden</div>",
    "<noscript><img src=x>Enable scripts</noscript>", "<object data=x>Get it</object>",
]  # fmt: skip
_WORDS = st.from_regex(r"\A[a-z]{2,8}\Z").map(lambda word: f" {word}x ")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_PIECES), _WORDS), min_size=1, max_size=40))
def test_text_in_markup_of_any_shape_is_kept(pieces: list[str]) -> None:
    html = "".join(pieces)
    kept, shown = share_kept(html, _plain(html))
    assert kept == shown


def _messages(folder: Path) -> Iterator[tuple[str, bytes]]:
    for path in sorted(folder.rglob("*")):
        if not path.is_file():
            continue
        data = path.read_bytes()
        if not data.startswith(b"From "):
            yield str(path.relative_to(folder)), data
            continue
        box = mailbox.mbox(path, create=False)
        try:
            for key in box.iterkeys():
                yield f"{path.relative_to(folder)}#{key}", box.get_bytes(key)
        finally:
            box.close()


def _html_only(raw: bytes) -> bool:
    """Whether the message's body is HTML alone: no text/plain part at all."""
    parsed = message_from_bytes(raw, policy=policy.compat32)
    types = {part.get_content_type() for part in parsed.walk()}
    return "text/html" in types and "text/plain" not in types


@pytest.mark.corpus
def test_html_only_corpus_mail_keeps_the_words_a_browser_shows(corpora: Path) -> None:
    losing: list[str] = []
    checked = 0
    for name, raw in _messages(corpora / "messages"):
        if not _html_only(raw):
            continue
        message = normalize_message(raw)
        if message.html is None:
            continue
        checked += 1
        kept, shown = share_kept(message.html, message.plain_text)
        if kept < 0.9 * shown:
            losing.append(f"{name}: {kept} of {shown}")
    assert checked > 250, checked
    assert losing == []


@pytest.mark.corpus
def test_email_templates_keep_the_words_a_browser_shows(corpora: Path) -> None:
    losing: list[str] = []
    checked = 0
    for path in sorted((corpora / "html" / "email-html").rglob("*.htm*")):
        try:
            html = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError:  # the same page in other encodings
            continue
        checked += 1
        kept, shown = share_kept(html, html_to_text(html))
        if kept < 0.9 * shown:
            losing.append(f"{path.name}: {kept} of {shown}")
    assert checked > 40, checked
    assert losing == []
