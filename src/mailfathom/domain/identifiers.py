"""Message identifiers as read from the Message-ID, In-Reply-To and References headers.

RFC 5322 section 3.6.4 defines ``msg-id = [CFWS] "<" id-left "@" id-right ">" [CFWS]`` and
lets In-Reply-To and References carry a list of them (section 3.6.4, and the obsolete forms of
section 4.5.4, which allow phrases and comments between the identifiers). Real mail bends that
grammar often: identifiers folded over two lines, missing brackets, phrases such as
``<id@host> (Some Person's message of ...)`` and lone words between identifiers.

Conversations are compared with Dovecot's THREAD=REFS answers, so extraction follows the
same lenient reading (Dovecot's lib-mail message-id.c), which keeps the two in agreement on
real mail:

* only text between ``<`` and ``>`` can be an identifier; anything between bracketed tokens
  (words, commas, comments, addresses without brackets) is skipped;
* only ``>`` ends a token, so a stray ``<`` inside one stays part of it;
* a bracketed token must contain ``@`` to count: ``<abc>`` is ignored, and scanning
  resumes after it;
* folding and other white space inside a token is removed (``<a b@c>`` reads ``ab@c``),
  since a line fold inside a long identifier is the usual reason for it;
* a token holding a comment or a quoted string is read with the RFC 5322 grammar: comments
  and white space around the parts are dropped, a quoted id-left is unquoted
  (``<"a b"@c>`` reads ``a b@c``); if that reading fails, the token is skipped and
  scanning resumes just after its ``<``;
* a domain literal (``<x@[192.0.2.1]>``) and non-ASCII text are kept as written;
* identifiers are compared exactly as written (no case folding): RFC 5322 gives no
  case-insensitive comparison for msg-id, and case-insensitive matching would join messages
  the sender's software considered distinct.

The functions here are pure and never raise on malformed input.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

__all__ = [
    "connected_identifier_set",
    "normalize_references",
    "parse_msg_ids",
]

_LWSP = " \t\r\n"
_STRIP_LWSP = str.maketrans("", "", _LWSP)
# The characters of a bracketed token before its end (">"), a quoted string or a comment.
_PLAIN_TOKEN = re.compile(r'[^>"(]*')
# RFC 5322 section 3.2.3 atext, plus any non-ASCII character (treated as atext, the way
# 8-bit header octets are in practice).
_ATEXT_PUNCTUATION = frozenset("!#$%&'*+-/=?^_`{|}~")


def _is_atext(char: str) -> bool:
    if not char.isascii():
        return True
    return char.isalnum() or char in _ATEXT_PUNCTUATION


class _Reader:
    """A cursor over a header value for the RFC 5322 productions a msg-id can contain."""

    __slots__ = ("pos", "text")

    def __init__(self, text: str, pos: int) -> None:
        self.text = text
        self.pos = pos

    def at_end(self) -> bool:
        return self.pos >= len(self.text)

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def skip_comment(self) -> bool:
        """Skip one comment (RFC 5322 section 3.2.2), nesting and quoted-pairs included.

        Returns False when the comment is not closed.
        """
        text = self.text
        level = 1
        self.pos += 1
        while self.pos < len(text):
            char = text[self.pos]
            if char == "(":
                level += 1
            elif char == ")":
                level -= 1
                if level == 0:
                    self.pos += 1
                    return True
            elif char == "\\":
                self.pos += 1
                if self.pos >= len(text):
                    return False
            self.pos += 1
        return False

    def skip_cfws(self) -> bool:
        """Skip white space and comments (CFWS). Returns False on an unclosed comment."""
        text = self.text
        while self.pos < len(text):
            char = text[self.pos]
            if char in _LWSP:
                self.pos += 1
            elif char == "(":
                if not self.skip_comment():
                    return False
            else:
                break
        return True

    def dot_atom(self) -> str | None:
        """Read a dot-atom, allowing CFWS around the dots (obsolete forms, section 4.4).

        Returns None when no atom starts here, the input ends inside it, or a comment is
        left open: in each case the identifier cannot be complete.
        """
        text = self.text
        if self.at_end() or not _is_atext(text[self.pos]):
            return None
        parts: list[str] = []
        start = self.pos
        while True:
            while self.pos < len(text) and _is_atext(text[self.pos]):
                self.pos += 1
            parts.append(text[start : self.pos])
            if not self.skip_cfws() or self.at_end():
                return None
            if text[self.pos] != ".":
                return "".join(parts)
            parts.append(".")
            self.pos += 1
            if not self.skip_cfws() or self.at_end():
                return None
            start = self.pos

    def quoted_string(self) -> str | None:
        """Read a quoted string (section 3.2.4): quotes removed, quoted-pairs and folds undone."""
        text = self.text
        self.pos += 1
        out: list[str] = []
        while self.pos < len(text):
            char = text[self.pos]
            if char == '"':
                self.pos += 1
                if not self.skip_cfws():
                    return None
                return "".join(out)
            if char in "\r\n":
                self.pos += 1
                continue
            if char == "\\":
                self.pos += 1
                if self.pos >= len(text):
                    return None
                char = text[self.pos]
            out.append(char)
            self.pos += 1
        return None


def _read_structured(text: str, pos: int) -> tuple[str, int] | None:
    """Read ``id-left "@" id-right ">"`` starting just after a ``<``, with CFWS allowed.

    Returns the identifier and the position after ``>``, or None when the token does not
    follow the grammar.
    """
    reader = _Reader(text, pos)
    if not reader.skip_cfws():
        return None
    left = reader.quoted_string() if reader.peek() == '"' else reader.dot_atom()
    if left is None or reader.peek() != "@":
        return None
    reader.pos += 1
    if not reader.skip_cfws():
        return None
    right = reader.dot_atom()
    if right is None or reader.peek() != ">":
        return None
    return f"{left}@{right}", reader.pos + 1


def parse_msg_ids(value: str | None) -> tuple[str, ...]:
    """Every message identifier in a Message-ID, In-Reply-To or References value.

    Identifiers come back without their angle brackets, in the order written, repeats
    kept (callers decide what a repeat means). See the module documentation for the
    leniency rules; the result is empty for None, an empty value or a value without any
    usable bracketed token.
    """
    if not value:
        return ()
    end = value.find("\0")
    text = value if end < 0 else value[:end]
    length = len(text)
    found: list[str] = []
    pos = 0
    while True:
        start = text.find("<", pos)
        if start < 0:
            break
        token_start = start + 1
        # Up to the first character that ends a plain token or starts a quoted string or a
        # comment (scanned by the regular expression engine: References headers of long
        # conversations hold dozens of identifiers).
        matched = _PLAIN_TOKEN.match(text, token_start)
        scan = matched.end() if matched else token_start
        if scan >= length:
            break
        if text[scan] == ">":
            pos = scan + 1
            if text.find("@", token_start, scan) >= 0:
                found.append(text[token_start:scan].translate(_STRIP_LWSP))
            continue
        structured = _read_structured(text, token_start)
        if structured is None:
            pos = token_start
            continue
        identifier, pos = structured
        found.append(identifier)
    return tuple(found)


def normalize_references(
    references: Sequence[str], in_reply_to: Iterable[str], own_id: str | None
) -> tuple[str, ...]:
    """The ancestry a message claims, oldest first, as RFC 5256 section 2.2 reads it.

    The References identifiers are used when there is at least one; otherwise the first
    In-Reply-To identifier is the only reference (RFC 5256 section 2.2, "the first (if
    any) valid Message ID of the In-Reply-To header line"). The message's own identifier is
    left out of both: a message cannot be its own ancestor, and keeping it would only
    produce a loop that the linking step has to refuse.
    Repeats are kept so the linking step sees the header's order unchanged.
    """
    if references:
        if own_id not in references and "" not in references:
            return tuple(references)
        refs = tuple(r for r in references if r and r != own_id)
        if refs:
            return refs
    for candidate in in_reply_to:
        if candidate and candidate != own_id:
            return (candidate,)
    return ()


def connected_identifier_set(
    message_id: str | None, in_reply_to: Iterable[str], references: Iterable[str]
) -> tuple[str, ...]:
    """Every distinct identifier a message names (own, References, In-Reply-To), first seen first.

    This is wider than what linking uses (In-Reply-To counts even when References is
    present), so a lookup by these identifiers finds every stored message the assembler
    could connect this one to.
    """
    seen: dict[str, None] = {}
    if message_id:
        seen[message_id] = None
    for identifier in references:
        if identifier:
            seen.setdefault(identifier, None)
    for identifier in in_reply_to:
        if identifier:
            seen.setdefault(identifier, None)
    return tuple(seen)
