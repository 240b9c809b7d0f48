"""Sanitizing a message's HTML body before a caller sees it.

The body is first read into a tree as a browser builds it (`document`), and there:

- text a person never sees is removed with its element (`hidden`), so that a program
  reading the markup is not given words its reader never saw;
- elements whose content a browser does not render as text (the title, the fallback content
  of frames, objects and media, templates, drop-down lists) go with their content: stripping
  their tags alone would show that content;
- images that would be fetched from elsewhere are replaced by a visible marker, `[image]` or
  `[image: <alt text>]`, unless the account lets remote images load (`RemoteImages =
  "allow"`); an image of a pixel or less (a tracking pixel) is removed either way, and one
  with any other source but the message's own parts (`cid:`) becomes the marker too;
- a link whose text is not its target is followed by the target in brackets, so text that
  reads like one address cannot hide that the link leads to another;
- nesting deeper than `document.MAX_DEPTH` is flattened: the HTML5 tree builder below
  spends time growing with the square of the depth, and no mail needs more.

`nh3` (the ammonia sanitizer, an HTML5 parser) then rebuilds what remains under a fixed
allow-list of structural and formatting tags, dropping scripts, styles, event handlers,
forms and frames; links keep only http, https and mailto targets with `rel="noopener
noreferrer nofollow"` and no `target`; relative addresses go; and an inline style keeps only
declarations of colour, font, text, spacing, border, size and alignment whose value loads
nothing (no `url()`, `expression()`, `@import` or escapes). A document libxml2 cannot read
to its end (nested past 2048 elements) is given as its shown words in one paragraph.
"""

from __future__ import annotations

import html as markup
from collections.abc import Callable

import nh3
from lxml.html import HtmlElement, tostring

from mailfathom.adapters.html.document import CutShort, flatten, parse_document
from mailfathom.adapters.html.hidden import remove_hidden
from mailfathom.adapters.html.inline_style import declarations
from mailfathom.adapters.html.plain_text import words_only

_TAGS = {
    "a", "abbr", "b", "blockquote", "br", "caption", "code", "col", "colgroup", "dd", "del",
    "div", "dl", "dt", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "ins",
    "li", "ol", "p", "pre", "q", "s", "small", "span", "strong", "sub", "sup", "table",
    "tbody", "td", "tfoot", "th", "thead", "tr", "u", "ul",
}  # fmt: skip
_ATTRIBUTES = {
    "a": {"href", "title"},
    "img": {"src", "alt", "title", "width", "height"},
    "td": {"colspan", "rowspan"},
    "th": {"colspan", "rowspan"},
    "*": {"dir", "lang", "style"},
}
_DROPPED_WITH_CONTENT = {
    "script", "style", "title", "iframe", "frame", "frameset", "noscript", "noembed",
    "noframes", "object", "embed", "applet", "template", "audio", "video", "canvas",
    "datalist", "select",
}  # fmt: skip
# Properties that colour, size and place text and boxes inside the message; none of them
# loads anything or lifts an element out of the message (position, z-index, transforms).
_SAFE_PROPERTIES = {
    "color", "background-color", "font", "font-family", "font-size", "font-style",
    "font-weight", "font-variant", "line-height", "letter-spacing", "word-spacing",
    "text-align", "text-decoration", "text-transform", "white-space", "vertical-align",
    "direction", "width", "height", "min-width", "max-width", "min-height", "max-height",
    "margin", "margin-top", "margin-right", "margin-bottom", "margin-left", "padding",
    "padding-top", "padding-right", "padding-bottom", "padding-left", "border",
    "border-top", "border-right", "border-bottom", "border-left", "border-color",
    "border-style", "border-width", "border-radius", "border-collapse", "border-spacing",
    "list-style-type",
}  # fmt: skip
_UNSAFE_IN_VALUES = ("url(", "expression(", "@import", "\\", "javascript:", "<", "/*")
_REMOTE_SCHEMES = ("http:", "https:", "//")
_LINK_SCHEMES = ("http:", "https:", "mailto:")
_IMAGE_MARKER = "[image]"


def _safe_style(style: str) -> str | None:
    kept = [
        f"{name}:{value}"
        for name, value in declarations(style)
        if name in _SAFE_PROPERTIES and value and not any(u in value for u in _UNSAFE_IN_VALUES)
    ]
    return ";".join(kept) or None


def _attribute_filter(remote_images: bool) -> Callable[[str, str, str], str | None]:
    def kept(tag: str, attribute: str, value: str) -> str | None:
        if attribute == "style":
            return _safe_style(value)
        if tag == "img" and attribute == "src":
            source = value.strip().lower()
            if source.startswith("cid:") or (remote_images and source.startswith(_REMOTE_SCHEMES)):
                return value
            return None
        if attribute == "href" and not value.strip().lower().startswith(_LINK_SCHEMES):
            return None
        return value

    return kept


def _tiny(image: HtmlElement) -> bool:
    for side in ("width", "height"):
        size = (image.get(side) or "").strip().lower().removesuffix("px")
        if size.isdigit() and int(size) <= 1:
            return True
    style = dict(declarations(image.get("style") or ""))
    return any(style.get(side, "").removesuffix("px") in ("0", "1") for side in ("width", "height"))


def _replace_images(body: HtmlElement, remote_images: bool) -> None:
    for image in list(body.iter("img")):
        source = (image.get("src") or "").strip().lower()
        if _tiny(image):
            image.drop_tree()
        elif source.startswith("cid:") or (remote_images and source.startswith(_REMOTE_SCHEMES)):
            continue
        else:
            alt = " ".join((image.get("alt") or "").split())
            marker = body.makeelement("span", {})
            marker.text = f"[image: {alt}]" if alt else _IMAGE_MARKER
            marker.tail = image.tail
            image.getparent().replace(image, marker)


def _bare(address: str) -> str:
    address = address.strip().lower()
    for scheme in ("https://", "http://", "mailto:"):
        address = address.removeprefix(scheme)
    return address.rstrip("/")


def _show_link_targets(body: HtmlElement) -> None:
    for link in body.iter("a"):
        target = (link.get("href") or "").strip()
        if not target.lower().startswith(_LINK_SCHEMES):
            continue
        text = " ".join(link.text_content().split())
        if _bare(text) != _bare(target):
            link.tail = f" ({target})" + (link.tail or "")


def _as_html5_builds(body: HtmlElement) -> None:
    """Make the tree what an HTML5 tree builder makes of it, so that its depth is the depth
    nh3 builds: rows directly in a table go into a body of rows, and the empty paragraphs
    `document` makes of every `</p>` (which matter to the plain text only) go."""
    for table in list(body.iter("table")):
        rows = [child for child in table if child.tag == "tr"]
        if rows:
            group = table.makeelement("tbody", {})
            rows[0].addprevious(group)
            group.extend(rows)
    # Their content is raw text to an HTML5 parser, and `plaintext` never ends: as `pre`
    # they show the same text with markup escaped.
    for raw in body.iter("plaintext", "xmp", "listing"):
        raw.tag = "pre"
    for paragraph in list(body.iter("p")):
        if not paragraph.attrib and not paragraph.text and not len(paragraph):
            paragraph.drop_tree()


def _serialized(body: HtmlElement) -> str:
    return markup.escape(body.text or "", quote=False) + "".join(
        tostring(child, encoding="unicode") for child in body
    )


def _prepared(html: str, remote_images: bool) -> str:
    document = parse_document(html)
    if document is None:
        return ""
    body = document.find("body")
    if body is None:
        return ""
    for element in list(body.iter(*_DROPPED_WITH_CONTENT)):
        element.drop_tree()
    remove_hidden(body)
    _replace_images(body, remote_images)
    _show_link_targets(body)
    _as_html5_builds(body)
    flatten(body)
    return _serialized(body)


class NhHtmlSanitizer:
    def sanitize(self, html: str, *, remote_images: bool = False) -> str:
        try:
            prepared = _prepared(html, remote_images)
        except CutShort:
            words = words_only(html).strip()
            prepared = f"<p>{markup.escape(words, quote=False)}</p>" if words else ""
        return nh3.clean(
            prepared,
            tags=_TAGS,
            clean_content_tags=_DROPPED_WITH_CONTENT,
            attributes=_ATTRIBUTES,
            attribute_filter=_attribute_filter(remote_images),
            url_schemes={"http", "https", "mailto", "cid"},
            url_relative="deny",
            filter_style_properties=_SAFE_PROPERTIES,
            link_rel="noopener noreferrer nofollow",
            strip_comments=True,
        )
