"""Rendering an HTML body as the plain text a reader of it sees.

The HTML is parsed with lxml and laid out by inscriptis, with these rules (docs/plain-text.md
states them for readers):

- The whole document counts, built as a browser builds it (`document` says how libxml2's
  tree is brought to the HTML5 one). A document nested deeper than libxml2 reads (2048
  elements), or one the renderer fails on (inscriptis recurses once a level, which the
  interpreter stops near 1000), is given as its words alone.
- Only what a browser renders as text is kept. Head, script, style and title, and the
  fallback content of elements that show something else or nothing (iframe, noscript,
  object, embed, applet, noembed, noframes, template, audio, video, canvas, datalist) are
  left out, as is text a reader never sees (`hidden` says which: hidden elements, invisible,
  tiny, transparent or background-coloured text). A drop-down list shows its chosen option
  (the first when none is marked selected) alone.
- Layout is not reproduced. Tables are not drawn as grids: each row starts a line and the
  cells of a row that share a line are separated by one tab, while cells holding blocks
  of their own fall onto lines of their own. Margins, padding, widths and alignment are
  ignored, runs of white space inside text become one space, line ends lose their
  trailing white space, and blank lines are at most one in a row. Paragraphs and headings
  are set apart by one blank line, list items keep their bullet or number, and
  preformatted text keeps its spaces.
"""

from __future__ import annotations

from html.parser import HTMLParser

from inscriptis.css_profiles import STRICT_CSS_PROFILE
from inscriptis.html_engine import Inscriptis
from inscriptis.html_properties import Display, WhiteSpace
from inscriptis.model.config import ParserConfig
from inscriptis.model.html_document_state import HtmlDocumentState
from inscriptis.model.html_element import HtmlElement as Layout
from inscriptis.model.tag import CustomHtmlTagHandlerMapping
from lxml.html import HtmlElement

from mailfathom.adapters.html.document import parse_document
from mailfathom.adapters.html.hidden import (
    PAGE,
    Appearance,
    appearance,
    hidden_whole,
    remove_hidden,
)
from mailfathom.adapters.html.inline_style import declarations

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
    """The text outside the elements that are not rendered or are hidden, for the rare
    document the renderer fails on or libxml2 cannot read to its end; the stdlib tokenizer
    reads anything without raising. Text in the head is kept, as a browser moves it to the
    body. Without a tree, an element is taken to run to its own end tag: one left open
    hides everything after it, which errs towards leaving out text a reader saw rather than
    keeping text no one saw."""

    _SKIPPED = frozenset({"script", "style", "title", "select", *_NOT_RENDERED})
    _VOID = frozenset(
        {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param",
         "source", "track", "wbr"}
    )  # fmt: skip

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.pieces: list[str] = []
        self._skipping: list[str] = []
        # The open elements that set an appearance, innermost last.
        self._shown: list[tuple[str, Appearance]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.pieces.append(" ")
        if tag in self._VOID:
            return
        attributes = dict(attrs)
        if tag in self._SKIPPED or hidden_whole(attributes):
            self._skipping.append(tag)
        elif not self._skipping and (
            attributes.keys() & {"style", "color", "bgcolor", "text", "background"}
        ):
            inherited = self._shown[-1][1] if self._shown else PAGE
            self._shown.append((tag, appearance(attributes, inherited)))

    def handle_endtag(self, tag: str) -> None:
        if tag in self._skipping:
            while self._skipping.pop() != tag:
                pass
        elif any(open_tag == tag for open_tag, _ in self._shown):
            while self._shown.pop()[0] != tag:
                pass
        self.pieces.append(" ")

    def handle_data(self, data: str) -> None:
        if not self._skipping and not (self._shown and self._shown[-1][1].hides_text()):
            self.pieces.append(data)


def words_only(html: str) -> str:
    """The words of `html` a reader sees, in order, on one line, without layout."""
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
        return words_only(html)


def _render(html: str) -> str:
    document = parse_document(html)
    if document is None:
        return ""
    remove_hidden(document)
    if "&" in html:
        _escape_ampersands(document)
    _drop_unchosen_options(document)
    text = _tidy(Inscriptis(document, _config()).get_text())
    return text + "\n" if text else ""
