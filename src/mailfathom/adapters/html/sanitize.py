"""Sanitizing a message's HTML body before a caller sees it.

`nh3` (the ammonia sanitizer) keeps a fixed allow-list of structural and formatting tags and
drops scripts, styles, event handlers, forms and frames. Links keep only http, https and
mailto targets, and images lose their source unless it is inline data (`cid:` and remote
addresses would make a reader fetch something, which is how trackers learn a mail was read).
"""

from __future__ import annotations

import nh3

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
    "*": {"dir", "lang"},
}


class NhHtmlSanitizer:
    def sanitize(self, html: str) -> str:
        return nh3.clean(
            html,
            tags=_TAGS,
            attributes=_ATTRIBUTES,
            url_schemes={"http", "https", "mailto"},
            link_rel="noopener noreferrer nofollow",
            strip_comments=True,
        )
