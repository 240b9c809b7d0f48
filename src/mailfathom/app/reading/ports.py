"""Ports the reading use cases need beyond the stored mail (`app.shared.stored_mail_ports`)."""

from __future__ import annotations

from typing import Protocol


class HtmlSanitizer(Protocol):
    def sanitize(self, html: str, *, remote_images: bool = False) -> str:
        """HTML with everything active removed and no text its reader never saw; safe to
        show as is. Nothing loads from elsewhere unless `remote_images` (the account's
        choice) lets images do so."""
        ...


class TextPattern(Protocol):
    """A compiled regular expression. Matching takes time linear in the text, whatever the
    pattern, so a caller's pattern cannot hold a request hostage."""

    def found_in(self, text: str) -> bool:
        """Whether the pattern matches anywhere in `text`."""
        ...

    def spans(self, text: str, limit: int) -> list[tuple[int, int]]:
        """Up to `limit` non-empty, non-overlapping (start, end) character spans it matches,
        in order."""
        ...


class PatternCompiler(Protocol):
    def compile(self, pattern: str) -> TextPattern | None:
        """The pattern compiled to ignore case (an inline `(?-i)` turns case back on), or None
        when the engine does not accept it: a syntax error, a construct it does not offer
        (backreferences, lookaround) or a program over its memory bound. Synchronous; it
        writes nothing, and in particular never logs the pattern."""
        ...
