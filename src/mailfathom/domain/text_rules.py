"""What text a value may hold: the one rule every check of caller or operator text applies.

Three shapes of text are told apart:

- A one-line value (a header value such as a subject or an address, a search query, a
  filter, a key, a cursor) holds no control character: no C0 control, no DEL, no C1 control
  (NEL, U+0085, among them), no line or paragraph separator (U+2028, U+2029), and no lone
  surrogate. Each of those either breaks a line somewhere a line is parsed, or cannot be
  written as UTF-8 at all.
- A name a person reads (an account's or a folder's) is a one-line value that also holds no
  bidirectional override or isolate, which can make one name display as another.
- A name a caller gives something people are then shown (a folder it creates, a contact, a
  file) is a name that holds no character that renders as nothing at all (`unseen`): a
  zero-width space makes `IN<U+200B>BOX` display exactly as `INBOX`.
- Multi-line text (a body) may break lines and hold tabs, but is made of Unicode scalar values
  only, and holds no NUL.

A lone surrogate (U+D800 to U+DFFF on its own) is not a character: it has no UTF-8 form, so
text carrying one fails wherever it is encoded (a database driver, a composed message, a
JSON answer). It can only arrive from a decoder that kept undecodable input, so it is refused
where text enters, never repaired.
"""

from __future__ import annotations

import re
import unicodedata

from mailfathom.domain import unseen

_ZWJ = "\u200d"
_JOINERS = frozenset({"\u200c", _ZWJ})
# The canonical combining class of a virama.
_VIRAMA = 9
# Symbols and modifier symbols: pictographs and the skin tones joined to them.
_PICTOGRAPHS = frozenset({"So", "Sk"})

# C0 controls, DEL, C1 controls (NEL among them), the line and paragraph separators (the
# whole of the Zl and Zp categories), and the surrogate code points.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
# Bidirectional embeddings, overrides (U+202A to U+202E) and isolates (U+2066 to U+2069).
_BIDI_CONTROL = re.compile("[\u202a-\u202e\u2066-\u2069]")
_SURROGATE = re.compile("[\ud800-\udfff]")
# How an account identifier is spelt: the configuration accepts no other, and a refusal quotes
# a name only when it is spelt so (anything else may be text the caller copied out of mail).
ACCOUNT_IDENTIFIER = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def has_control_character(text: str) -> bool:
    """Whether `text` holds anything a one-line value may not: a C0 or C1 control, DEL, a
    line or paragraph separator, or a lone surrogate."""
    return _CONTROL.search(text) is not None


def has_bidi_control(text: str) -> bool:
    """Whether `text` holds a bidirectional embedding, override or isolate."""
    return _BIDI_CONTROL.search(text) is not None


def has_invisible_character(text: str) -> bool:
    """Whether `text` holds a character that renders as nothing: a control, a format
    character (zero-width spaces and joiners, marks, tags), a separator of lines or
    paragraphs, a lone surrogate, a variation selector, or another default-ignorable code
    point (`unseen`)."""
    return unseen.has_unseen(text)


def is_one_line(text: str) -> bool:
    """Whether `text` may stand as a one-line value, such as a header value."""
    return not has_control_character(text)


def is_name(text: str) -> bool:
    """Whether `text` may stand as a name a person reads: one line, and displayed in the
    order it is written."""
    return not has_control_character(text) and not has_bidi_control(text)


def is_shown_name(text: str) -> bool:
    """Whether `text` may stand as a name a caller gives something people are shown: a name
    (`is_name`) without any character that renders as nothing, so that it cannot display
    as another name, but for those that do a visible job where they stand (`_draws`)."""
    if not is_name(text):
        return False
    if not unseen.has_unseen(text):
        return True
    return all(_draws(text, index) for index, char in enumerate(text) if unseen.is_unseen(char))


def _draws(text: str, index: int) -> bool:
    """Whether the unseen character at `index` changes how its neighbours are drawn, as the
    script or sequence around it requires: a zero-width non-joiner or joiner after a virama
    (RFC 5892's first contextual rule), a non-joiner between two letters of a joining script
    written right to left such as Persian (the second rule, read from the letters' bidi class,
    marks between skipped), a joiner between two pictographs (an emoji sequence), a variation
    selector after a visible character outside ASCII. Anywhere else it would only hide a
    difference."""
    char = text[index]
    if char in _JOINERS:
        before, after = _letter(text, index, -1), _letter(text, index, 1)
        if index and unicodedata.combining(text[index - 1]) == _VIRAMA:
            return True
        if char != _ZWJ:
            return _joins(before) and _joins(after)
        return (
            unicodedata.category(before or " ") in _PICTOGRAPHS
            and unicodedata.category(after or " ") in _PICTOGRAPHS
        )
    if _is_selector(char):
        before = text[index - 1] if index else ""
        return bool(before) and not before.isascii() and not unseen.is_unseen(before)
    return False


def _letter(text: str, index: int, step: int) -> str:
    """The nearest character from `index` in the direction of `step` that is not a
    combining mark; empty at the end of the text."""
    index += step
    while 0 <= index < len(text) and unicodedata.category(text[index]) == "Mn":
        index += step
    return text[index] if 0 <= index < len(text) else ""


def _joins(char: str) -> bool:
    return bool(char) and unicodedata.bidirectional(char) == "AL" and char.isalpha()


def _is_selector(char: str) -> bool:
    point = ord(char)
    return 0xFE00 <= point <= 0xFE0F or 0xE0100 <= point <= 0xE01EF


def is_scalar_text(text: str) -> bool:
    """Whether `text` is made of Unicode scalar values only (no lone surrogate)."""
    return _SURROGATE.search(text) is None


def is_body_text(text: str) -> bool:
    """Whether `text` may stand as the body of a message: any line breaks, no NUL, and no
    lone surrogate."""
    return "\x00" not in text and is_scalar_text(text)


def is_account_identifier(text: str) -> bool:
    return ACCOUNT_IDENTIFIER.fullmatch(text) is not None
