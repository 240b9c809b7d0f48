"""Parsing an HTML body into the tree a browser builds, and bounding how deep it nests.

The HTML is parsed with lxml (libxml2), whose tree differs from the HTML5 one in ways that
lose text, which are made up for: content after `</body>` or `</html>` (list footers,
documents appended to a part) is dropped by libxml2 but read into the body by browsers, so
those end tags are removed before parsing; `</br>` is a line break and `</p>` ends a
paragraph or makes an empty one, where libxml2 drops both and joins the words on either
side; anything but head content (title, meta, styles, scripts) starts the body, where
libxml2 keeps some elements (`o:p`, `xml`, form controls, table cells) in the head; and
nesting is bounded at 2048 elements instead of 256, past which libxml2 stops reading
(`CutShort`). libxml2 reads deep nesting in time linear in its length, where an HTML5 tree
builder spends time growing with the square of the depth: `flatten` is how a tree is made
shallow enough for one.
"""

from __future__ import annotations

import re

from lxml.etree import ErrorLevels, ParserError
from lxml.html import HtmlElement, document_fromstring
from lxml.html import HTMLParser as LibxmlParser

# How deep elements nest in what is given to an HTML5 tree builder. WebKit's parser stops
# nesting at 512 as well, placing deeper elements beside each other; no mail needs more.
MAX_DEPTH = 512

# End tags libxml2 reads otherwise than a browser: after `</body>` and `</html>` a browser
# goes on reading into the body, `</br>` is a line break, and `</p>` closes the paragraph
# open or, with none open, makes an empty one (which `</p><p></p>` gives in both cases).
_END_TAGS = re.compile(r"</(body|html|br|p)(?=[\s/>])[^>]{0,100}>", re.IGNORECASE)
_AS_A_BROWSER_READS = {"body": "", "html": "", "br": "<br>", "p": "</p><p></p>"}
# What a browser keeps in the head (HTML 5.2 section 8.2.5.4.4); anything else starts the body.
HEAD_CONTENT = frozenset(
    {"base", "basefont", "bgsound", "link", "meta", "noframes", "noscript", "script", "style",
     "template", "title"}
)  # fmt: skip
_XML_DECLARATION = re.compile(r"^<\?xml[^>]*>")
# Elements laid out inline: unwrapping one joins its words to its neighbours, as it shows.
_INLINE = frozenset(
    {"a", "abbr", "b", "bdi", "bdo", "big", "cite", "code", "data", "del", "dfn", "em",
     "font", "i", "ins", "kbd", "mark", "q", "s", "samp", "small", "span", "strike",
     "strong", "sub", "sup", "time", "tt", "u", "var"}
)  # fmt: skip


class CutShort(Exception):
    """libxml2 stopped reading before the end of the document."""


def _browser_end_tag(match: re.Match[str]) -> str:
    return _AS_A_BROWSER_READS[match.group(1).lower()]


def parse_document(html: str) -> HtmlElement | None:
    """The document as a browser builds it, or None when it holds no element at all (nothing
    but comments, a doctype or white space). Raises `CutShort` when libxml2 stops early."""
    html = _END_TAGS.sub(_browser_end_tag, html.strip())
    if html.startswith("<?xml"):
        html = _XML_DECLARATION.sub("", html, count=1)
    # One parser a document: a parser is not to be shared between threads, and its error
    # log tells whether it read to the end.
    parser = LibxmlParser(huge_tree=True)
    try:
        document = document_fromstring(html, parser=parser)
    except ParserError:
        return None
    if any(error.level == ErrorLevels.FATAL for error in parser.error_log):
        raise CutShort
    _start_body_where_a_browser_does(document)
    return document


def _start_body_where_a_browser_does(document: HtmlElement) -> None:
    """Move what follows the head content out of the head, to the start of the body."""
    head = document.find("head")
    if head is None:
        return
    first = next(
        (child for child in head if isinstance(child.tag, str) and child.tag not in HEAD_CONTENT),
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


def flatten(root: HtmlElement, max_depth: int = MAX_DEPTH) -> int:
    """Unwrap every element nested more than `max_depth` below `root`, keeping its text in
    place (set apart by a space where the element is not an inline one, so words stay
    apart); returns how many were unwrapped. Deepest first, so each unwrapped element holds
    only text by then."""
    deep: list[HtmlElement] = []
    stack: list[tuple[HtmlElement, int]] = [(root, 0)]
    while stack:
        element, depth = stack.pop()
        for child in element:
            if depth + 1 > max_depth:
                deep.append(child)
            stack.append((child, depth + 1))
    for element in reversed(deep):
        if isinstance(element.tag, str) and element.tag not in _INLINE:
            element.text = " " + (element.text or "")
            element.tail = " " + (element.tail or "")
        if isinstance(element.tag, str):
            element.drop_tag()
        else:  # a comment or processing instruction
            element.drop_tree()
    return len(deep)
