"""The four character signals of the authorship reading: text no mail client renders.

Each is a fact about the characters a message carries rather than an opinion about its style,
and each leaves out the uses ordinary text has for the same characters, so that what fires is
a character with no visible purpose where it stands:

- `tagCharacters`: the Unicode tag block (U+E0000 to U+E007F), which can spell out a whole
  hidden text letter for letter. A subdivision flag (a black flag U+1F3F4, tag letters, the
  cancel tag U+E007F: the flags of England, Scotland and Wales) is what the block is for in
  mail, and does not fire.
- `variationSelectorRun`: variation selectors (U+FE00 to U+FE0F, U+E0100 to U+E01EF and the
  Mongolian free variation selectors) beyond what presentation needs. One selector after a
  character chooses how that character is drawn (an emoji or a text glyph, an ideograph
  variant); two or more in a row, or one after a Latin, Greek or Cyrillic letter, after white
  space or at the start of the text, choose nothing and can carry hidden bytes instead.
- `bidirectionalOverrides`: an override (U+202D, U+202E) anywhere, and an embedding or isolate
  (U+202A, U+202B, U+2066 to U+2069, U+202C) in text that holds no right-to-left letter to
  need one. They reorder what a reader sees against what the text says.
- `hiddenCharacters`: every other format or default-ignorable character `domain/unseen.py`
  knows (zero-width spaces, word joiners, the byte order mark, invisible operators, fillers),
  except where the character has a visible job: a zero-width joiner or non-joiner between two
  letters, marks or symbols outside ASCII (emoji sequences, Indic and Persian joining; between
  Latin letters it joins nothing), a zero-width space between
  two letters of a script written without spaces, a byte order mark opening the text, and a
  directional mark (U+200E, U+200F, U+061C) unless three or more stand in a row: mail
  clients write single marks around dates and names in any script, and a mark moves no
  letter, but a run of them spells bits. The soft hyphen never fires: it is
  a hyphenation hint, and far more often byte 0xAD of a legacy character set, where it was a
  visible dash. Line breaks, tabs and other control characters are layout, not hidden text,
  and never fire either.

The scan reads the whole text with one regular expression over every candidate code point
(built once from the Unicode database this Python carries), so ordinary text costs one pass
in C and only the few candidates it finds are judged one by one. Text of Latin-1 characters
only (ASCII, and most Western European mail) skips the scan: its one candidate, the soft
hyphen, never fires.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Iterator

from mailfathom.domain.authorship import AuthorshipSignal
from mailfathom.domain.unseen import is_unseen

CHARACTER_SIGNALS = (
    AuthorshipSignal.TAG_CHARACTERS,
    AuthorshipSignal.VARIATION_SELECTOR_RUN,
    AuthorshipSignal.HIDDEN_CHARACTERS,
    AuthorshipSignal.BIDIRECTIONAL_OVERRIDES,
)
TAG_FIRST, TAG_LAST = 0xE0000, 0xE007F
_CANCEL_TAG = "\U000e007f"
_BLACK_FLAG = "\U0001f3f4"
_OVERRIDES = frozenset("\u202d\u202e")
_EMBEDDINGS = frozenset("\u202a\u202b\u202c\u2066\u2067\u2068\u2069")
_DIRECTIONAL_MARKS = frozenset("\u200e\u200f\u061c")
_MARK_RUN = 3
_JOINERS = frozenset("\u200c\u200d")
_SOFT_HYPHEN = "\u00ad"
_ZERO_WIDTH_SPACE = "\u200b"
_BYTE_ORDER_MARK = "\ufeff"
# Letters of the scripts whose selectors choose nothing (an emoji base or an ideograph is a
# symbol or an `Lo` letter and may carry one).
_CASED_LETTER = frozenset({"Lu", "Ll", "Lt"})
_RIGHT_TO_LEFT = re.compile(
    "[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefe\U00010800-\U00010fff\U0001e800-\U0001efff]"
)
# The planes where a format or default-ignorable character is assigned (or reserved to be).
_SCANNED_PLANES = ((0x80, 0x2FFFF), (0xE0000, 0xE0FFF))


def _is_selector(char: str) -> bool:
    point = ord(char)
    return (
        0xFE00 <= point <= 0xFE0F
        or 0xE0100 <= point <= 0xE01EF
        or 0x180B <= point <= 0x180D
        or point == 0x180F
    )


def _is_candidate(char: str) -> bool:
    return unicodedata.category(char) not in {"Cc", "Zl", "Zp", "Cs"} and is_unseen(char)


def _build_candidates() -> re.Pattern[str]:
    ranges: list[tuple[int, int]] = []
    for first, last in _SCANNED_PLANES:
        for point in range(first, last + 1):
            if not _is_candidate(chr(point)):
                continue
            if ranges and ranges[-1][1] == point - 1:
                ranges[-1] = (ranges[-1][0], point)
            else:
                ranges.append((point, point))
    members = "".join(
        re.escape(chr(low)) if low == high else f"{re.escape(chr(low))}-{re.escape(chr(high))}"
        for low, high in ranges
    )
    return re.compile(f"[{members}]+")


class _Candidates:
    """The candidate pattern, built on first use (it reads some 200,000 code points from the
    Unicode database once) and shared by every thread afterwards."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pattern: re.Pattern[str] | None = None

    def pattern(self) -> re.Pattern[str]:
        if self._pattern is None:
            with self._lock:
                if self._pattern is None:
                    self._pattern = _build_candidates()
        return self._pattern


_CANDIDATES = _Candidates()


def character_signals(text: str) -> frozenset[AuthorshipSignal]:
    """The character signals `text` carries (see the module)."""
    found: set[AuthorshipSignal] = set()
    if _latin_1(text):
        return frozenset()
    right_to_left: bool | None = None
    for index in _candidate_positions(text):
        char = text[index]
        point = ord(char)
        before = text[index - 1] if index else ""
        after = text[index + 1] if index + 1 < len(text) else ""
        if TAG_FIRST <= point <= TAG_LAST:
            if not _in_flag_sequence(text, index):
                found.add(AuthorshipSignal.TAG_CHARACTERS)
        elif _is_selector(char):
            if not _carries_selector(before):
                found.add(AuthorshipSignal.VARIATION_SELECTOR_RUN)
        elif char in _OVERRIDES:
            found.add(AuthorshipSignal.BIDIRECTIONAL_OVERRIDES)
        elif char in _DIRECTIONAL_MARKS:
            run = text[index : index + _MARK_RUN]
            if len(run) == _MARK_RUN and all(c in _DIRECTIONAL_MARKS for c in run):
                found.add(AuthorshipSignal.HIDDEN_CHARACTERS)
        elif char in _EMBEDDINGS:
            if right_to_left is None:
                right_to_left = _RIGHT_TO_LEFT.search(text) is not None
            if not right_to_left:
                found.add(AuthorshipSignal.BIDIRECTIONAL_OVERRIDES)
        elif not _has_visible_job(char, before, after, index):
            found.add(AuthorshipSignal.HIDDEN_CHARACTERS)
        if len(found) == len(CHARACTER_SIGNALS):
            break
    return frozenset(found)


def _latin_1(text: str) -> bool:
    """Whether every character of `text` is below U+0100, where the only candidate is the soft
    hyphen, which never fires: such a text carries no character signal. Encoding answers in
    one pass in C (a copy, for text Python already keeps one byte a character), where the
    candidate scan costs some ten times more."""
    if text.isascii():
        return True
    try:
        text.encode("latin-1")
    except UnicodeEncodeError:
        return False
    return True


def _candidate_positions(text: str) -> Iterator[int]:
    for match in _CANDIDATES.pattern().finditer(text):
        yield from range(match.start(), match.end())


def _in_flag_sequence(text: str, index: int) -> bool:
    """Whether the tag character at `index` belongs to a subdivision flag: a black flag, at
    most seven tag characters, the cancel tag."""
    start = index
    while start > 0 and TAG_FIRST <= ord(text[start - 1]) < TAG_LAST:
        start -= 1
    if start == 0 or text[start - 1] != _BLACK_FLAG:
        return False
    end = index
    while end < len(text) and TAG_FIRST <= ord(text[end]) < TAG_LAST:
        end += 1
    return end < len(text) and text[end] == _CANCEL_TAG and 1 <= end - start <= 7


def _carries_selector(base: str) -> bool:
    """Whether a variation selector after `base` can choose how `base` is drawn: not after
    another selector, a cased letter, white space, a control or the start of the text."""
    if not base or _is_selector(base):
        return False
    category = unicodedata.category(base)
    return category not in _CASED_LETTER and not category.startswith(("C", "Z"))


def _has_visible_job(char: str, before: str, after: str, index: int) -> bool:
    """Whether the one hidden character `char`, with `before` and `after` around it, is doing
    what ordinary text uses it for (see the module)."""
    if char == _SOFT_HYPHEN:
        return True
    if char == _BYTE_ORDER_MARK:
        return index == 0
    if not before or not after:
        return False
    if char in _JOINERS:
        return _joinable(before) and _joinable(after)
    if char == _ZERO_WIDTH_SPACE:
        return _unspaced_script(before) and _unspaced_script(after)
    return False


def _joinable(char: str) -> bool:
    if char.isascii():
        return False
    category = unicodedata.category(char)
    return category[0] in {"L", "M", "S"} or _is_selector(char)


def _unspaced_script(char: str) -> bool:
    """A letter of a script written without spaces between words (Thai, Lao, Khmer, Myanmar,
    Tibetan, Chinese, Japanese): an `Lo` letter outside the Latin, Greek and Cyrillic ranges."""
    return unicodedata.category(char) == "Lo" and ord(char) >= 0x0E00
