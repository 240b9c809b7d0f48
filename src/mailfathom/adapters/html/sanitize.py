"""Sanitizing a message's HTML body before a caller sees it.

`nh3` (the ammonia sanitizer) keeps a fixed allow-list of structural and formatting tags and
drops scripts, styles, event handlers, forms and frames. Links keep only http, https and
mailto targets, and images lose their source unless it is inline data (`cid:` and remote
addresses would make a reader fetch something, which is how trackers learn a mail was read).

Elements whose content a browser does not render as text (the title, the fallback content of
frames, objects and media, templates, drop-down lists) go with their content: stripping their
tags alone would show that content, and the raw-text ones would show their markup as text.
Hidden content stays hidden: the `hidden` attribute is kept, and an inline style only as
`display:none`.
"""

from __future__ import annotations

import nh3

from mailfathom.adapters.html.inline_style import hides

_TAGS = {
    "a", "abbr", "b", "blockquote", "br", "caption", "code", "col", "colgroup", "dd", "del",
    "div", "dl", "dt", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "ins",
    "li", "ol", "p", "pre", "q", "s", "small", "span", "strong", "sub", "sup", "table",
    "tbody", "td", "tfoot", "th", "thead", "tr", "u", "ul",
}  # fmt: skip
_ATTRIBUTES = {
    "a": {"href", "title"},
    "img": {"alt", "title", "width", "height"},
    "td": {"colspan", "rowspan"},
    "th": {"colspan", "rowspan"},
    "*": {"dir", "lang", "hidden", "style"},
}
_DROPPED_WITH_CONTENT = {
    "script", "style", "title", "iframe", "frame", "frameset", "noscript", "noembed",
    "noframes", "object", "embed", "applet", "template", "audio", "video", "canvas",
    "datalist", "select",
}  # fmt: skip


def _only_hiding(_tag: str, attribute: str, value: str) -> str | None:
    """An inline style becomes `display:none` when it hides its element, else goes."""
    if attribute != "style":
        return value
    return "display:none" if hides(value) else None


class NhHtmlSanitizer:
    def sanitize(self, html: str) -> str:
        return nh3.clean(
            html,
            tags=_TAGS,
            clean_content_tags=_DROPPED_WITH_CONTENT,
            attributes=_ATTRIBUTES,
            attribute_filter=_only_hiding,
            url_schemes={"http", "https", "mailto"},
            link_rel="noopener noreferrer nofollow",
            strip_comments=True,
        )
