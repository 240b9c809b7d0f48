"""Ports the reading use cases need beyond the stored mail (`app.shared.stored_mail_ports`)."""

from __future__ import annotations

from typing import Protocol

from mailfathom.domain.download_links import DownloadGrant, LinkFault


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


class AttachmentLinks(Protocol):
    """Seals download grants into links and opens presented links again. Synchronous,
    thread-safe and free of I/O; neither method logs what it is given."""

    def issue(self, grant: DownloadGrant) -> str:
        """The absolute address of a link granting `grant`."""
        ...

    def open(self, token: str) -> DownloadGrant | LinkFault:
        """The grant the last path segment of a link carries, or why it carries none (never
        raises, whatever `token` is). The expiry is the caller's to check."""
        ...
