"""What of a console page stays English in another language: the words a person reads (text
nodes and the attributes a browser shows or speaks) that the English rendering of the same
page has too, less what is the same in every language (names, codes, dates, addresses)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime

import lxml.html

# The attributes a person reads or hears: tooltips, labels for assistive technology, field
# hints, the column names a narrow screen shows before each cell, and the words the scripts
# write into the page (live.js: what changed; passkey.js: how a ceremony goes).
READ_ATTRIBUTES = (
    "title",
    "aria-label",
    "placeholder",
    "alt",
    "data-label",
    "data-updated",
    "data-changed",
    "data-gone",
    "data-failed",
    "data-unsupported",
    "data-working",
)
_LETTER = re.compile(r"[^\W\d_]")


def read_strings(html: str) -> set[str]:
    """Every string of the page a person reads, stripped; scripts and styles left out."""
    tree = lxml.html.fromstring(html)
    found: set[str] = set()
    for element in tree.iter():
        if not isinstance(element.tag, str):
            continue
        if element.tag not in ("script", "style") and element.text:
            found.add(element.text.strip())
        if element.tail:
            found.add(element.tail.strip())
        for name in READ_ATTRIBUTES:
            value = element.get(name)
            if value:
                found.add(value.strip())
        if element.tag == "input" and element.get("type") in ("submit", "button"):
            found.add((element.get("value") or "").strip())
    return {s for s in found if _LETTER.search(s) and not _moment(s) and not _identifier(s)}


def _identifier(text: str) -> bool:
    """Whether `text` is one token holding a digit (a key's identifier, a code): no word
    of any language is written so."""
    return not any(c.isspace() for c in text) and any(c.isdigit() for c in text)


def _moment(text: str) -> bool:
    """Whether `text` is a date and time as the pages write it (ISO 8601)."""
    try:
        datetime.fromisoformat(text)
    except ValueError:
        return False
    return True


def english_left(english: str, other: str, same_everywhere: Iterable[str] = ()) -> set[str]:
    """The strings of `other` that are English: found in the English rendering too, and not
    among `same_everywhere` (the data on the page and words every language writes alike)."""
    allowed = set(same_everywhere)
    return (read_strings(other) & read_strings(english)) - allowed
