"""The sanitized HTML body: nothing active, and no content a browser would not show."""

from __future__ import annotations

import pytest

from mailfathom.adapters.html.sanitize import NhHtmlSanitizer


def _sanitized(html: str) -> str:
    return NhHtmlSanitizer().sanitize(html)


@pytest.mark.parametrize(
    ("element", "html"),
    [
        ("iframe", '<iframe src="x.html"><script src="https://t.example/a.js"></script></iframe>'),
        ("iframe", "<iframe>Your mail reader <b>cannot</b> show frames</iframe>"),
        ("noscript", '<noscript><img src="https://t.example/p.gif">Enable scripts</noscript>'),
        ("object", '<object data="m.swf"><param name="a" value="b">Get the player</object>'),
        ("noembed", "<noembed><b>Get the player</b></noembed>"),
        ("noframes", "<noframes><a href='x'>Frames needed</a></noframes>"),
        ("template", "<template><p>Template row</p></template>"),
        ("video", "<video src='v.mp4'>Your reader cannot play video</video>"),
        ("title", "<title>Document title</title>"),
        ("select", "<select><option>First</option><option>Second</option></select>"),
    ],
)
def test_content_a_browser_does_not_render_is_removed(element: str, html: str) -> None:
    assert _sanitized(f"<p>Before</p>{html}<p>After</p>") == "<p>Before</p><p>After</p>", element


@pytest.mark.parametrize(
    "html",
    [
        "<div hidden>Hidden preheader</div>",
        '<span style="color: red; DISPLAY: none !important; background: url(https://t.example/p.gif)">'
        "Hidden preheader</span>",
    ],
)
def test_hidden_content_is_removed_with_its_element(html: str) -> None:
    """A program reading the markup must not be given words its reader never saw (the
    techniques one by one: tests/html_body/test_hidden_text.py)."""
    assert _sanitized(f"<p>Shown</p>{html}") == "<p>Shown</p>"


def test_text_showing_markup_stays_escaped() -> None:
    assert _sanitized("<p>&lt;script&gt; &amp;lt;</p>") == "<p>&lt;script&gt; &amp;lt;</p>"
