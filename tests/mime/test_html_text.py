"""The plain text of an HTML-only message: what a browser shows, without its layout."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mailfathom.adapters.html import plain_text
from mailfathom.adapters.mime import normalize_message

_WORD = re.compile(r"\w+")


def _plain(html: str) -> str:
    raw = b"Content-Type: text/html; charset=utf-8\r\n\r\n" + html.encode("utf-8")
    return normalize_message(raw).plain_text


@pytest.mark.parametrize(
    "html",
    [
        "<html><body><p>Main</p></body></html>\n<p>Footer words</p>",
        "<html><body><p>Main</p></body>\n<p>Footer words</p></html>",
        "<HTML><BODY><p>Main</p></BODY ></HTML >\r\nFooter words",
        "<html><body><p>Main</p></body></html><html><body><p>Footer words</p></body></html>",
    ],
)
def test_content_after_the_end_of_the_document_is_kept(html: str) -> None:
    text = _plain(html)
    assert "Main" in text
    assert "Footer words" in text
    assert text.index("Main") < text.index("Footer words")


_NEWSLETTER = """\
<html><head><style>td { padding: 20px }</style></head>
<body style="margin:0">
<table width="100%" cellpadding="0" cellspacing="0"><tr><td align="center">
  <table width="600" style="margin: 40px auto">
    <tr><td>&nbsp;</td><td><h1>Spring   news</h1></td><td>&nbsp;</td></tr>
    <tr><td width="20"></td><td style="padding-left: 60px">
        <p>First   paragraph,
           over two lines.</p>
        <p style="margin-top: 48px">Second paragraph.</p>
        <ul><li>one item</li><li>another item</li></ul>
    </td><td width="20">&nbsp;&nbsp;&nbsp;</td></tr>
    <tr><td></td><td>
      <table><tr><th>Product</th><th>Price</th></tr>
             <tr><td>Tea</td><td></td><td>&nbsp;</td><td>3 EUR</td></tr></table>
    </td></tr>
    <tr><td height="40">&nbsp;</td></tr>
    <tr><td><br><br><br><div>&nbsp;</div><div></div></td></tr>
    <tr><td></td><td><div><div>Unsubscribe</div></div></td></tr>
  </table>
</td></tr></table>
</body></html>
"""


def test_layout_whitespace_is_collapsed_and_structure_kept() -> None:
    assert _plain(_NEWSLETTER) == (
        "Spring news\n"
        "\n"
        "First paragraph, over two lines.\n"
        "\n"
        "Second paragraph.\n"
        "\n"
        "  * one item\n"
        "  * another item\n"
        "Product\tPrice\n"
        "Tea\t3 EUR\n"
        "\n"
        "Unsubscribe\n"
    )


def test_preformatted_text_keeps_its_spaces() -> None:
    text = _plain("<p>Intro</p><pre>x  = 1\n    y = 2</pre><p>Outro</p>")
    assert "x  = 1\n    y = 2" in text


# Real HTML-only messages laid out with tables (spam from the SpamAssassin corpus: mass
# mailings built like newsletters).
NEWSLETTERS = [
    "00237.9cee6fd8bdd653d21d92158e702adf50.txt",
    "00286.efd0b8f0c9c779b7a0ad93505c9b0bae.txt",
    "00167.af33a21e8b279ee28d5e70a6ef1dc86a.txt",
    "00499.988506a852cf86b396771a8bdc8cf839.txt",
    "00473.7086ec944a1245a002b04547a433c887.txt",
    "00405.3163fff27ff95b91afd656f0025c6a83.txt",
    "00282.0e230e05877f40a522bfb93aa3e314f3.txt",
    "00211.d976c6049e8448e7c407c124b580e0ba.txt",
    "00448.a6ac96e93ef03ec1a638c577c6940f5e.txt",
    "00430.d2179c2841013fea688db8bbcf60b3b0.txt",
]


def newsletter_paths(corpora: Path) -> list[Path]:
    return [corpora / "messages" / "spamassassin-spam-1" / name for name in NEWSLETTERS]


@pytest.mark.corpus
def test_real_table_layouts_give_text_without_padding(corpora: Path) -> None:
    for path in newsletter_paths(corpora):
        message = normalize_message(path.read_bytes())
        assert message.html is not None
        text = message.plain_text
        words = _WORD.findall(text)
        assert len(words) > 50, path.name
        # English text runs at about six characters a word, separators included.
        assert len(text) / len(words) < 10, path.name
        lines = text.split("\n")
        assert all(line == line.rstrip() for line in lines), path.name
        assert "\n\n\n" not in text, path.name


@pytest.mark.parametrize(
    ("element", "html"),
    [
        ("iframe", '<iframe src="x.html"><script src="https://t.example/a.js"></script></iframe>'),
        ("iframe", "<iframe>Your mail reader <b>cannot</b> show frames</iframe>"),
        ("noscript", '<noscript><img src="https://t.example/p.gif">Enable scripts</noscript>'),
        ("object", '<object data="m.swf"><param name="a" value="b">Get the player</object>'),
        ("object", '<object data="m.swf"><embed src="m.swf">Get the player</object>'),
        ("noembed", "<noembed><b>Get the player</b></noembed>"),
        ("noframes", "<noframes><a href='x'>Frames needed</a></noframes>"),
        ("template", "<template><p>Template row</p></template>"),
        ("video", "<video src='v.mp4'>Your reader cannot play video</video>"),
        ("hidden", "<div hidden>Hidden preheader</div>"),
        ("display", "<span style='color:red; DISPLAY : None !important'>Hidden preheader</span>"),
    ],
)
def test_what_a_browser_does_not_render_is_left_out(element: str, html: str) -> None:
    text = _plain(f"<p>Before</p>{html}<p>After</p>")
    assert text == "Before\n\nAfter\n", element


def test_text_that_shows_markup_is_not_turned_into_markup() -> None:
    # The browser shows "&lt;script&gt;": character references written as text stay text.
    text = _plain("<p>Write &amp;lt;script src=x&amp;gt; &amp;amp; &lt;b&gt; here</p>")
    assert text == "Write &lt;script src=x&gt; &amp; <b> here\n"


def test_control_characters_in_the_html_do_not_cost_the_text() -> None:
    # A UTF-16 body read as UTF-8 is full of NUL octets.
    raw = b"Content-Type: text/html\r\n\r\n<p>a\x00b &amp;lt;c&amp;gt; \x01d</p><script>s</script>"
    message = normalize_message(raw)
    assert message.plain_text == "ab &lt;c&gt; d\n"
    assert message.defects == ()


@pytest.mark.parametrize(
    ("html", "shown"),
    [
        (
            "<html><head><title>Title</title><style>p {}</style></head><body><p>Shown &amp; "
            "read</p><script>var hidden = 1;</script><iframe><script src=x></script>frame"
            "</iframe><noscript>no</noscript></body></html><p>Footer</p>",
            "Shown & read Footer\n",
        ),
        # The head is never closed: a browser still shows the body.
        ("<html><head><title>Title</title><body><p>Shown words</p></body></html>", "Shown words\n"),
    ],
)
def test_a_renderer_failure_still_gives_only_rendered_text(
    monkeypatch: pytest.MonkeyPatch, html: str, shown: str
) -> None:
    def failing(*_args: object) -> None:
        raise RuntimeError("renderer failure")

    monkeypatch.setattr(plain_text, "Inscriptis", failing)
    assert _plain(html) == shown
