"""The words a browser shows in an HTML document, read independently of the converter under
test: html5ever (through nh3) builds the tree by the HTML5 parsing rules browsers follow, and
the standard library's tokenizer walks that well-formed serialization.

What is not rendered is left out as the converter documents it: the head's title, scripts and
styles, the fallback content of frames, objects and media, drop-down lists and text areas,
and elements hidden by a `hidden` attribute or an inline `display: none`. Elements other than
inline ones end a word, as a block, a line break or a table cell does on screen.
"""

from __future__ import annotations

import re
from collections import Counter
from html.parser import HTMLParser

import nh3

WORD = re.compile(r"\w+")

_NOT_RENDERED = {
    "script", "style", "title", "iframe", "noscript", "noembed", "noframes", "object",
    "embed", "applet", "template", "audio", "video", "canvas", "datalist", "select",
    "textarea", "frame", "frameset",
}  # fmt: skip
# Elements laid out inline by default (CSS 2.1 appendix D and the HTML rendering section);
# nh3 strips tags it is not given, keeping their content, which is how an unknown element
# shows too.
_INLINE = {
    "a", "abbr", "acronym", "b", "bdi", "bdo", "big", "blink", "cite", "code", "data",
    "del", "dfn", "em", "font", "i", "img", "ins", "kbd", "label", "mark", "nobr", "q", "s",
    "samp", "small", "span", "strike", "strong", "sub", "sup", "time", "tt", "u", "var",
    "wbr",
}  # fmt: skip
_SEPARATING = {
    "address", "area", "article", "aside", "blockquote", "br", "button", "caption",
    "center", "col", "colgroup", "dd", "details", "dir", "div", "dl", "dt", "fieldset",
    "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header",
    "hr", "input", "legend", "li", "main", "map", "marquee", "menu", "nav", "ol", "optgroup",
    "option", "p", "pre", "section", "summary", "table", "tbody", "td", "tfoot", "th",
    "thead", "tr", "ul",
}  # fmt: skip
_VOID = {"area", "br", "col", "hr", "img", "input", "wbr"}
_HIDING_STYLE = re.compile(r"(?:^|;)\s*display\s*:\s*none\s*(?:!\s*important\s*)?(?:;|$)", re.I)
_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


class _Walk(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.pieces: list[str] = []
        self._hidden: list[bool] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in _INLINE:
            self.pieces.append(" ")
        if tag in _VOID:
            return
        attributes = dict(attrs)
        style = attributes.get("style") or ""
        self._hidden.append("hidden" in attributes or bool(_HIDING_STYLE.search(style)))

    def handle_endtag(self, tag: str) -> None:
        if tag in _VOID:
            return
        self._hidden.pop()
        if tag not in _INLINE:
            self.pieces.append(" ")

    def handle_data(self, data: str) -> None:
        if not any(self._hidden):
            self.pieces.append(data)


def shown_words(html: str) -> list[str]:
    """The words of `html` a browser shows, in order."""
    tree = nh3.clean(
        _CONTROLS.sub("", html),
        tags=_INLINE | _SEPARATING,
        clean_content_tags=_NOT_RENDERED,
        attributes={"*": {"hidden", "style"}},
        link_rel=None,
        strip_comments=True,
    )
    walk = _Walk()
    walk.feed(tree)
    walk.close()
    return WORD.findall("".join(walk.pieces))


def share_kept(html: str, text: str) -> tuple[int, int]:
    """(how many of the words a browser shows in `html` are in `text`, how many it shows),
    counted case-blind, each occurrence once."""
    shown = Counter(word.lower() for word in shown_words(html))
    kept = Counter(word.lower() for word in WORD.findall(text))
    return sum(min(count, kept[word]) for word, count in shown.items()), sum(shown.values())
