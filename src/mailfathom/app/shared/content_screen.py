"""The screen every tool's mail text passes before a caller reads it, and every message passes
before it leaves.

Where the deployment scans for sensitive content, each finding in a text is replaced by
`[redacted:<category>]`; a body is scanned only up to the configured ceiling and the rest is
withheld, never served unscanned. Nothing stored is changed: a screen works on what is about to
be returned. A scanner that raises fails the call (55002, or 55003 for a message leaving): an
error is never an excuse to return what was not scanned.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import structlog

from mailfathom.domain.codes import Code
from mailfathom.domain.errors import Refusal
from mailfathom.domain.sensitive_content import (
    Finding,
    OutgoingScreening,
    SensitiveCategory,
    SensitiveContentConfig,
    redacted,
    redacted_with_spans,
)

log = structlog.get_logger("mailfathom.screen")

_READ_FAILED = (
    "The sensitive-content scanner could not answer, so no mail text is returned; ask again, "
    "and tell the operator if this persists."
)
_SEND_FAILED = (
    "The sensitive-content scanner could not screen this message, so it was not queued; ask "
    "again, and tell the operator if this persists."
)


class SensitiveScanner(Protocol):
    def findings(self, text: str, categories: frozenset[SensitiveCategory]) -> Sequence[Finding]:
        """Where material of `categories` stands in `text`, in order and not overlapping.
        Synchronous, stateless, safe from any thread. May raise anything: the screen fails
        the call closed."""
        ...


@dataclass(frozen=True, slots=True)
class ScreenedBody:
    """A body as it may be returned. `withheld` says the scan ceiling cut it."""

    text: str
    withheld: bool


class ContentScreen:
    """Redacts mail text for a caller and names the categories a message leaving carries.
    Without a scanner, or with scanning switched off, every text passes as it is."""

    def __init__(
        self, scanner: SensitiveScanner | None, config: SensitiveContentConfig | None = None
    ) -> None:
        self._config = config or SensitiveContentConfig()
        self._scanner = scanner
        self._categories = self._config.categories if self._config.enabled else frozenset()

    @property
    def active(self) -> bool:
        return self._scanner is not None and bool(self._categories)

    @property
    def outgoing(self) -> OutgoingScreening:
        return self._config.outgoing

    def _findings(self, text: str, failure: tuple[Code, str]) -> Sequence[Finding]:
        assert self._scanner is not None
        try:
            return self._scanner.findings(text, self._categories)
        except Exception as error:
            log.error("sensitive_scan.failed", error_type=type(error).__name__)
            raise Refusal(*failure) from None

    def text(self, value: str | None, *, leaving: bool = False) -> str | None:
        """A short text (a subject, a name, a note) as a caller may read it. `leaving`: the
        text is part of a message about to leave, and a failure refuses the send."""
        if not value or not self.active:
            return value
        failure = (Code.OUTGOING_SCAN_FAILED, _SEND_FAILED) if leaving else None
        return redacted(
            value, self._findings(value, failure or (Code.SENSITIVE_SCAN_FAILED, _READ_FAILED))
        )

    def body(self, value: str) -> ScreenedBody:
        """A body as a caller may read it: scanned up to the ceiling, the rest withheld."""
        if not value or not self.active:
            return ScreenedBody(value, False)
        ceiling = self._config.scan_ceiling_characters
        scanned = value[:ceiling]
        found = self._findings(scanned, (Code.SENSITIVE_SCAN_FAILED, _READ_FAILED))
        return ScreenedBody(redacted(scanned, found), len(value) > ceiling)

    def marked(
        self, value: str, spans: Sequence[tuple[int, int]]
    ) -> tuple[str, list[tuple[int, int]]]:
        """A body and spans in it (what a search matched), redacted and moved together so
        no span splits a marker. Spans past the ceiling are dropped with the withheld text."""
        if not self.active:
            return value, list(spans)
        ceiling = self._config.scan_ceiling_characters
        scanned = value[:ceiling]
        inside = [(s, min(e, ceiling)) for s, e in spans if s < ceiling]
        found = self._findings(scanned, (Code.SENSITIVE_SCAN_FAILED, _READ_FAILED))
        return redacted_with_spans(scanned, found, inside)

    def categories_leaving(self, texts: Sequence[str | None]) -> frozenset[SensitiveCategory]:
        """The categories found in what a message carries out (subject, bodies, file names).
        Empty when nothing is screened, including under `Outgoing = "allow"`."""
        if not self.active or self._config.outgoing is OutgoingScreening.ALLOW:
            return frozenset()
        found: set[SensitiveCategory] = set()
        for value in texts:
            if value:
                failure = (Code.OUTGOING_SCAN_FAILED, _SEND_FAILED)
                found.update(f.category for f in self._findings(value, failure))
        return frozenset(found)


UNSCREENED = ContentScreen(None)
