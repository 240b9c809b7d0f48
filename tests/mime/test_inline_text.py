"""Every inline text part of a multipart/mixed message reaches the bodies, in order.

RFC 2046 section 5.1.3 presents the parts of a multipart/mixed one after the other; an
inline text part after the first one (a list footer, a second segment of a message written
in a client that mixes plain text and HTML) is part of what the reader sees. The plain body
holds each such part as text, HTML converted; the HTML body, when any inline part is HTML,
holds each part as HTML, plain text escaped inside a ``pre`` element.
"""

from __future__ import annotations

from mailfathom.adapters.mime.text import html_to_text
from mailfathom.domain.message import NormalizedMessage

from .build import raw
from .conftest import Normalize


def _in_order(text: str, *pieces: str) -> bool:
    positions = [text.find(piece) for piece in pieces]
    return -1 not in positions and positions == sorted(positions)


def _mixed(*parts: str) -> bytes:
    """A multipart/mixed message of the given parts (each its header block, a blank line
    and its body)."""
    body = "".join(f"--mix\n{part.strip()}\n" for part in parts)
    return raw(
        "Subject: mixed\nMIME-Version: 1.0\n"
        "Content-Type: multipart/mixed; boundary=mix\n\n" + body + "--mix--\n"
    )


_HTML_PART = "Content-Type: text/html; charset=utf-8\n\n<p>Rich <b>part</b>.</p>"
_PLAIN_PART = "Content-Type: text/plain; charset=utf-8\n\nPlain <segment> & more."
_FOOTER_PART = "Content-Type: text/plain\nContent-Disposition: inline\n\n-- list footer"
_ALTERNATIVE_PART = """
Content-Type: multipart/alternative; boundary=alt

--alt
Content-Type: text/plain

Plain alternative.
--alt
Content-Type: text/html

<p>HTML alternative.</p>
--alt--
"""


def _rendered(html: str) -> str:
    return html_to_text(html).strip()


def _no_parts(message: NormalizedMessage) -> None:
    assert message.parts == ()
    assert message.defects == ()


def test_an_inline_plain_part_after_an_html_part_is_in_both_bodies(
    normalize_both_ways: Normalize,
) -> None:
    message = normalize_both_ways(_mixed(_HTML_PART, "Content-Type: text/plain\n\nPlain footer."))
    assert message.plain_text == _rendered("<p>Rich <b>part</b>.</p>") + "\n\nPlain footer."
    assert message.html == "<p>Rich <b>part</b>.</p>\n<pre>Plain footer.</pre>"
    _no_parts(message)


def test_an_inline_html_part_after_a_plain_part_is_in_both_bodies(
    normalize_both_ways: Normalize,
) -> None:
    message = normalize_both_ways(_mixed(_PLAIN_PART, _HTML_PART))
    assert message.plain_text == "Plain <segment> & more.\n\n" + _rendered(
        "<p>Rich <b>part</b>.</p>"
    )
    assert message.html == "<pre>Plain &lt;segment&gt; &amp; more.</pre>\n<p>Rich <b>part</b>.</p>"
    _no_parts(message)


def test_a_second_inline_plain_part_follows_the_first(normalize_both_ways: Normalize) -> None:
    message = normalize_both_ways(_mixed(_PLAIN_PART, _FOOTER_PART))
    assert message.plain_text == "Plain <segment> & more.\n\n-- list footer"
    assert message.html is None
    _no_parts(message)


def test_inline_plain_text_after_an_alternative_follows_its_choices(
    normalize_both_ways: Normalize,
) -> None:
    message = normalize_both_ways(_mixed(_ALTERNATIVE_PART, _FOOTER_PART))
    assert message.plain_text == "Plain alternative.\n\n-- list footer"
    assert message.html == "<p>HTML alternative.</p>\n<pre>-- list footer</pre>"
    _no_parts(message)


def test_inline_html_after_an_alternative_follows_its_choices(
    normalize_both_ways: Normalize,
) -> None:
    message = normalize_both_ways(_mixed(_ALTERNATIVE_PART, _HTML_PART))
    assert message.plain_text == "Plain alternative.\n\n" + _rendered("<p>Rich <b>part</b>.</p>")
    assert message.html == "<p>HTML alternative.</p>\n<p>Rich <b>part</b>.</p>"
    _no_parts(message)


def test_inline_text_keeps_its_place_among_attachments(normalize_both_ways: Normalize) -> None:
    message = normalize_both_ways(
        _mixed(
            "Content-Type: text/plain\n\nFirst words.",
            "Content-Type: application/pdf; name=a.pdf\n\nPDF",
            _HTML_PART,
            "Content-Type: image/png\nContent-Disposition: attachment; filename=b.png\n\nPNG",
            _FOOTER_PART,
            "Content-Type: text/plain; name=notes.txt\n\nA named text file.",
        )
    )
    assert _in_order(message.plain_text, "First words.", "Rich part.", "-- list footer")
    assert "A named text file." not in message.plain_text
    assert message.html is not None
    assert _in_order(
        message.html, "<pre>First words.</pre>", "<p>Rich <b>part</b>.</p>", "list footer</pre>"
    )
    assert [(p.part_path, p.file_name) for p in message.parts] == [
        ("2", "a.pdf"),
        ("4", "b.png"),
        ("6", "notes.txt"),
    ]


def test_nested_mixed_parts_are_read_in_document_order(normalize_both_ways: Normalize) -> None:
    inner = (
        "Content-Type: multipart/mixed; boundary=inner\n\n"
        "--inner\nContent-Type: text/html\n\n<p>Inner html.</p>\n"
        "--inner\nContent-Type: text/plain\n\nInner plain.\n"
        "--inner--"
    )
    message = normalize_both_ways(
        _mixed("Content-Type: text/plain\n\nOuter first.", inner, _FOOTER_PART)
    )
    assert _in_order(
        message.plain_text, "Outer first.", "Inner html.", "Inner plain.", "-- list footer"
    )
    assert message.html == (
        "<pre>Outer first.</pre>\n<p>Inner html.</p>\n<pre>Inner plain.</pre>\n"
        "<pre>-- list footer</pre>"
    )
    _no_parts(message)


def test_an_alternative_whose_rich_choice_is_mixed_keeps_the_plain_choice_for_text(
    normalize_both_ways: Normalize,
) -> None:
    rich = (
        "Content-Type: multipart/mixed; boundary=rich\n\n"
        "--rich\nContent-Type: text/html\n\n<p>Rich body.</p>\n"
        "--rich\nContent-Type: text/plain\n\nRich footer.\n"
        "--rich--"
    )
    message = normalize_both_ways(
        raw(
            "Content-Type: multipart/alternative; boundary=alt\n\n"
            "--alt\nContent-Type: text/plain\n\nPlain body.\n"
            f"--alt\n{rich}\n"
            "--alt--\n"
        )
    )
    assert message.plain_text == "Plain body."
    assert message.html == "<p>Rich body.</p>\n<pre>Rich footer.</pre>"
    _no_parts(message)
