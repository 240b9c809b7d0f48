"""Rendering an HTML body as the plain text a reader of it sees.

The HTML is parsed with lxml and laid out by inscriptis, with these rules (docs/plain-text.md
states them for readers):

- The whole document counts, built as a browser builds it. libxml2's tree differs from the
  HTML5 one in ways that lose text, which are made up for: content after `</body>` or
  `</html>` (list footers, documents appended to a part) is dropped by libxml2 but read into
  the body by browsers, so those end tags are removed before parsing; `</br>` is a line
  break and `</p>` ends a paragraph or makes an empty one, where libxml2 drops both and
  joins the words on either side; anything but head content (title, meta, styles, scripts)
  starts the body, where libxml2 keeps some elements (`o:p`, `xml`, form controls, table
  cells) in the head; and nesting is bounded at 2048 elements instead of 256, past which
  libxml2 stops reading. A document nested deeper still, or one the renderer fails on
  (inscriptis recurses once a level, which the interpreter stops near 1000), is given as
  its words alone.
- Only what a browser renders as text is kept. Head, script, style and title, and the
  fallback content of elements that show something else or nothing (iframe, noscript,
  object, embed, applet, noembed, noframes, template, audio, video, canvas, datalist) are
  left out, as are elements hidden by a `hidden` attribute or an inline `display: none`. A
  drop-down list shows its chosen option (the first when none is marked selected) alone.
- Layout is not reproduced. Tables are not drawn as grids: each row starts a line and the
  cells of a row that share a line are separated by one tab, while cells holding blocks
  of their own fall onto lines of their own. Margins, padding, widths and alignment are
  ignored, runs of white space inside text become one space, line ends lose their
  trailing white space, and blank lines are at most one in a row. Paragraphs and headings
  are set apart by one blank line, list items keep their bullet or number, and
  preformatted text keeps its spaces.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from inscriptis.css_profiles import STRICT_CSS_PROFILE
from inscriptis.html_engine import Inscriptis
from inscriptis.html_properties import Display, WhiteSpace
from inscriptis.model.config import ParserConfig
from inscriptis.model.html_document_state import HtmlDocumentState
from inscriptis.model.html_element import HtmlElement as Layout
from inscriptis.model.tag import CustomHtmlTagHandlerMapping
from lxml.etree import ErrorLevels, ParserError
from lxml.html import HtmlElement, document_fromstring
from lxml.html import HTMLParser as LibxmlParser

from mailfathom.adapters.html.inline_style import declarations

# End tags libxml2 reads otherwise than a browser: after `</body>` and `</html>` a browser
# goes on reading into the body, `</br>` is a line break, and `</p>` closes the paragraph
# open or, with none open, makes an empty one (which `</p><p></p>` gives in both cases).
_END_TAGS = re.compile(r"</(body|html|br|p)(?=[\s/>])[^>]{0,100}>", re.IGNORECASE)
_AS_A_BROWSER_READS = {"body": "", "html": "", "br": "<br>", "p": "</p><p></p>"}
# What a browser keeps in the head (HTML 5.2 section 8.2.5.4.4); anything else starts the body.
_HEAD_CONTENT = frozenset(
    {"base", "basefont", "bgsound", "link", "meta", "noframes", "noscript", "script", "style",
     "template", "title"}
)  # fmt: skip
_XML_DECLARATION = re.compile(r"^<\?xml[^>]*>")
_NOT_RENDERED = (
    "iframe", "noscript", "object", "embed", "applet", "noembed", "noframes", "template",
    "audio", "video", "canvas", "datalist",
)  # fmt: skip
_CELL_SEPARATOR = "\t"


def _profile() -> dict[str, Layout]:
    profile = dict(STRICT_CSS_PROFILE)
    for tag in _NOT_RENDERED:
        profile[tag] = Layout(display=Display.none)
    for tag in ("table", "tr", "caption"):
        profile[tag] = Layout(display=Display.block)
    return profile


_PROFILE = _profile()


def _style(value: str, element: Layout) -> None:
    """The parts of an inline style that decide what text shows: display none and
    preformatted white space. Sizes, margins and alignment are layout and are ignored."""
    for name, setting in declarations(value):
        if name == "display" and setting == "none":
            element.display = Display.none
        elif name == "white-space":
            if setting in ("pre", "pre-wrap", "pre-line", "break-spaces"):
                element.whitespace = WhiteSpace.pre
            elif setting in ("normal", "nowrap"):
                element.whitespace = WhiteSpace.normal


def _hidden(_value: str, element: Layout) -> None:
    element.display = Display.none


def _cell(state: HtmlDocumentState, _attributes: dict[str, str]) -> None:
    """A table cell goes on with the line its row has begun, after a tab (one, however many
    empty cells came between)."""
    cell = state.tags[-1]
    line = cell.canvas.current_block
    # `content` drops a trailing space that is still collapsible, so no space precedes the tab.
    if cell.display is Display.none or not line.content or line.content.endswith("\t"):
        return
    cell.canvas.write(cell, _CELL_SEPARATOR, whitespace=WhiteSpace.pre)
    line.collapsable_whitespace = True  # white space that follows the tab is dropped


def _ignore(_state: HtmlDocumentState, *_attributes: object) -> None:
    return None


# inscriptis draws tables as grids; its table handlers are replaced by the cell rule above.
_TABLE_HANDLERS = CustomHtmlTagHandlerMapping(
    start_tag_mapping={"table": _ignore, "tr": _ignore, "td": _cell, "th": _cell},
    end_tag_mapping={"table": _ignore, "td": _ignore, "th": _ignore},
)


def _config() -> ParserConfig:
    # inscriptis gives the profile's body element the canvas of each conversion, so every
    # conversion has its own copy of it.
    profile = {**_PROFILE, "body": _PROFILE["body"].__copy__()}
    config = ParserConfig(css=profile, custom_html_tag_handler_mapping=_TABLE_HANDLERS)
    config.attribute_handler.attribute_mapping = {"style": _style, "hidden": _hidden}
    return config


class _CutShort(Exception):
    """libxml2 stopped reading before the end of the document."""


def _browser_end_tag(match: re.Match[str]) -> str:
    return _AS_A_BROWSER_READS[match.group(1).lower()]


def _document(html: str) -> HtmlElement | None:
    html = _END_TAGS.sub(_browser_end_tag, html.strip())
    if html.startswith("<?xml"):
        html = _XML_DECLARATION.sub("", html, count=1)
    # One parser a document: a parser is not to be shared between threads, and its error
    # log tells whether it read to the end.
    parser = LibxmlParser(huge_tree=True)
    try:
        document = document_fromstring(html, parser=parser)
    except ParserError:  # nothing but comments, a doctype or white space
        return None
    if any(error.level == ErrorLevels.FATAL for error in parser.error_log):
        raise _CutShort
    _start_body_where_a_browser_does(document)
    return document


def _start_body_where_a_browser_does(document: HtmlElement) -> None:
    """Move what follows the head content out of the head, to the start of the body."""
    head = document.find("head")
    if head is None:
        return
    first = next(
        (child for child in head if isinstance(child.tag, str) and child.tag not in _HEAD_CONTENT),
        None,
    )
    if first is None:
        return
    moved = [first, *first.itersiblings()]
    body = document.find("body")
    if body is None:
        body = document.makeelement("body", {})
        document.append(body)
    # Text after them was already moved to the start of the body, and stays after them.
    moved[-1].tail = (moved[-1].tail or "") + (body.text or "")
    body.text = None
    for place, element in enumerate(moved):
        body.insert(place, element)


def _escape_ampersands(document: HtmlElement) -> None:
    """inscriptis decodes character references in text that lxml has already decoded, which
    would turn text showing `&lt;b&gt;` into the tag `<b>`; its ampersands are escaped once
    more so that the second decoding gives the text back."""
    for node in document.xpath("//text()[contains(., '&')]"):
        parent = node.getparent()
        if parent is None:
            continue
        escaped = node.replace("&", "&amp;")
        try:
            if node.is_tail:
                parent.tail = escaped
            else:
                parent.text = escaped
        except ValueError:  # a character lxml refuses to set (U+FFFE, U+FFFF): left as it is
            continue


def _drop_unchosen_options(document: HtmlElement) -> None:
    for select in document.iter("select"):
        options = list(select.iter("option"))
        chosen = next((o for o in options if o.get("selected") is not None), None)
        for option in options[1:] if chosen is None else options:
            if option is not chosen:
                option.drop_tree()


class _Words(HTMLParser):
    """The text outside the elements that are not rendered, for the rare document the
    renderer fails on or libxml2 cannot read to its end; the stdlib tokenizer reads anything
    without raising. Text in the head is kept, as a browser moves it to the body."""

    _SKIPPED = frozenset({"script", "style", "title", "select", *_NOT_RENDERED})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.pieces: list[str] = []
        self._skipping: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self._SKIPPED:
            self._skipping.append(tag)
        self.pieces.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in self._skipping:
            while self._skipping.pop() != tag:
                pass
        self.pieces.append(" ")

    def handle_data(self, data: str) -> None:
        if not self._skipping:
            self.pieces.append(data)


def _words_only(html: str) -> str:
    words = _Words()
    words.feed(html)
    words.close()
    text = " ".join("".join(words.pieces).split())
    return text + "\n" if text else ""


def _tidy(text: str) -> str:
    """Lines without trailing white space, and no more than one blank line in a row, nor any
    at either end. (A line-by-line pass: a regular expression anchored at line ends would
    take quadratic time on a long run of spaces.)"""
    lines: list[str] = []
    for line in text.split("\n"):
        line = line.rstrip()
        if line or (lines and lines[-1]):
            lines.append(line)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def render_plain_text(html: str) -> str:
    """The text a reader sees in an HTML document, laid out as plain text."""
    try:
        return _render(html)
    except Exception:
        return _words_only(html)


def _render(html: str) -> str:
    document = _document(html)
    if document is None:
        return ""
    if "&" in html:
        _escape_ampersands(document)
    _drop_unchosen_options(document)
    text = _tidy(Inscriptis(document, _config()).get_text())
    return text + "\n" if text else ""
