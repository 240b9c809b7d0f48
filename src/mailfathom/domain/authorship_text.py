"""The part of a message's plain text its author wrote, which the style signals read.

Quoted lines (`>`), the attribution line introducing a quote ("On ... wrote:", "... napsal:",
"... napísal:"), everything after a signature separator (`-- `), a forwarded or original
message divider, and a patch (from its `diff`, `Index:` or `--- a/` line on) are somebody
else's text or not prose at all, and are left out. Only the first `STYLE_CHARACTER_LIMIT`
characters of a body are read (the profile's `style_character_limit`, part of its revision),
so a very long message costs no more than a long one: the opening of a text is where its
framing and scaffolding stand. The limit was chosen by measurement (docs/authorship.md).
"""

from __future__ import annotations

import itertools
import re

STYLE_CHARACTER_LIMIT = 4_000

_QUOTED = re.compile(r"^[ \t]*(?:>|\|[ \t])")
_ATTRIBUTION = re.compile(
    r"(?:wrote|writes|napsal(?:a|\(a\))?|napísal(?:a|\(a\))?|написал|schrieb)\s*:\s*$",
    re.IGNORECASE,
)
# Each searched in the text after a line break put before it, so a search jumps from line
# break to line break in C instead of trying every position.
_ENDS_OWN_TEXT = re.compile(
    r"\n(?:-- ?$|diff |Index: |--- a/|-{3,}[^\S\n]*(?:Original|Forwarded|Původní|Pôvodná"
    r"|Přeposlan|Preposlan)|_{20,}[^\S\n]*$|Begin forwarded message)",
    re.IGNORECASE | re.MULTILINE,
)
_QUOTED_LINE = re.compile(r"\n[ \t]*(?:>|\|[ \t])")
_LINE_ENDING_IN_COLON = re.compile(r":[^\S\n]*(?:\n|\Z)")
_WORD = re.compile(r"[^\W\d_](?:[^\W_]|['’-][^\W\d_])*")


def own_text(plain_text: str, character_limit: int = STYLE_CHARACTER_LIMIT) -> str:
    """The lines of the first `character_limit` characters of `plain_text` its author wrote
    (see the module), line breaks normalized."""
    text = "\n" + plain_text[:character_limit].replace("\r\n", "\n")
    end = _ENDS_OWN_TEXT.search(text)
    if end is not None:
        text = text[: end.start()]
    if _QUOTED_LINE.search(text) is None and _LINE_ENDING_IN_COLON.search(text) is None:
        return text.strip()
    kept = [
        line
        for line in text[1:].split("\n")
        if not (_QUOTED.match(line) or (line.rstrip().endswith(":") and _ATTRIBUTION.search(line)))
    ]
    return "\n".join(kept).strip()


def holds_words(text: str, minimum: int) -> bool:
    """Whether `text` holds at least `minimum` words (counting stops there): runs of letters,
    where a digit or an inner apostrophe or hyphen may follow the first letter, so numbers,
    dates and markup count none."""
    if minimum <= 0:
        return True
    return next(itertools.islice(_WORD.finditer(text), minimum - 1, None), None) is not None
