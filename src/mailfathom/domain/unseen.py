"""Characters that render as nothing, and text with each of them written out where a person
reads it.

A character renders as nothing when a display gives it no glyph of its own and it may still
change what the text around it looks like: controls (C0, DEL, C1), format characters
(bidirectional embeddings, overrides, isolates and marks, zero-width spaces and joiners, the
word joiner, the byte order mark, the soft hyphen, tags), line and paragraph separators, lone
surrogates, the variation selectors, and the rest of Unicode's default-ignorable code points
(`Other_Default_Ignorable_Code_Point` in the Unicode PropList: the combining grapheme joiner,
the Hangul fillers, two Khmer inherent vowels, and code points reserved to be ignorable, such
as U+2065 and the whole of U+E0000 to U+E0FFF). The categories and names come from the
Unicode database of this Python (`unicodedata`); only that last, short list is written here,
because the database this Python carries does not hold the property.

`marked` writes each such character as `⟦U+202E RIGHT-TO-LEFT OVERRIDE⟧` (the code point and
its Unicode name; a control, which has no name, as `⟦U+001B⟧`), so that a person is shown
every character a text holds and can tell text that merely looks alike apart.
"""

from __future__ import annotations

import re
import unicodedata

MARK_OPEN = "\u27e6"
MARK_CLOSE = "\u27e7"

_UNSEEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
# Other_Default_Ignorable_Code_Point, Unicode PropList.txt (the reserved ranges whole).
_OTHER_IGNORABLE = (
    (0x034F, 0x034F),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x2065, 0x2065),
    (0x3164, 0x3164),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0xE0000, 0xE0FFF),
)
# Every character that could render as nothing is outside printable ASCII.
_CANDIDATE = re.compile(r"[^\x20-\x7e]")
_KEPT = frozenset("\n\t")


class _Shown(dict[int, int | str]):
    """What each code point is shown as, looked up once per code point (`str.translate`
    reads it); at most `LIMIT` are kept, so no text can make it grow without bound."""

    LIMIT = 65536

    def __missing__(self, point: int) -> int | str:
        char = chr(point)
        shown: int | str = marker(char) if char not in _KEPT and is_unseen(char) else point
        if len(self) >= self.LIMIT:
            self.clear()
        self[point] = shown
        return shown


_SHOWN = _Shown()


def is_unseen(char: str) -> bool:
    """Whether the one character `char` renders as nothing (see the module)."""
    if unicodedata.category(char) in _UNSEEN_CATEGORIES:
        return True
    point = ord(char)
    if any(low <= point <= high for low, high in _OTHER_IGNORABLE):
        return True
    return "VARIATION SELECTOR" in unicodedata.name(char, "")


def has_unseen(text: str) -> bool:
    """Whether `text` holds a character that renders as nothing."""
    return any(is_unseen(m.group()) for m in _CANDIDATE.finditer(text))


def marker(char: str) -> str:
    """How `marked` writes the one character `char`."""
    name = unicodedata.name(char, "")
    named = f" {name}" if name else ""
    return f"{MARK_OPEN}U+{ord(char):04X}{named}{MARK_CLOSE}"


def marked(text: str) -> str:
    """`text` with every character that renders as nothing written as its marker, except a
    line break and a tab, which show as what they are (a CR before a line break is part of
    that line break)."""
    return text.replace("\r\n", "\n").translate(_SHOWN)
