"""Sensitive content: the categories a scanner finds, where it found them, and the rules that
turn findings into what a caller is shown.

A finding is a span of text and a category, never the text itself, so nothing downstream of a
scan can repeat a value by accident. Replacing findings is pure text work and lives here;
finding them is an adapter's (`adapters/sensitive`).
"""

from __future__ import annotations

import bisect
import enum
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

DEFAULT_SCAN_CEILING_CHARACTERS = 50_000


class SensitiveCategory(enum.Enum):
    PAYMENT_CARD = "paymentCard"
    IBAN = "iban"
    NATIONAL_IDENTIFIER = "nationalIdentifier"
    CREDENTIAL = "credential"
    ONE_TIME_CODE = "oneTimeCode"

    @property
    def marker(self) -> str:
        """What a caller reads where a finding of this category stood."""
        return f"[redacted:{self.value}]"


class OutgoingScreening(enum.Enum):
    """What happens to a message leaving with a finding when nobody is asked about it:
    refused (53013), kept as a draft with an owner alert, or sent unscreened."""

    REFUSE = "refuse"
    KEEP_DRAFT = "keepDraft"
    ALLOW = "allow"


@dataclass(frozen=True, slots=True, order=True)
class Finding:
    """Material of `category` stood at `text[start:end]`."""

    start: int
    end: int
    category: SensitiveCategory = field(compare=False)


@dataclass(frozen=True, slots=True)
class SensitiveContentConfig:
    """`[SensitiveContent]`. Off by default; when on, the categories listed are scanned for in
    what every tool returns from mail and in what leaves. A body is scanned up to
    `scan_ceiling_characters`; the rest is withheld rather than served unscanned."""

    enabled: bool = False
    categories: frozenset[SensitiveCategory] = frozenset(SensitiveCategory)
    scan_ceiling_characters: int = DEFAULT_SCAN_CEILING_CHARACTERS
    outgoing: OutgoingScreening = OutgoingScreening.REFUSE


def settled(findings: Iterable[Finding]) -> list[Finding]:
    """Findings in text order with no two overlapping: where two overlap, the one starting
    first (the longer at a tie) is kept and stretched over the other, so no part of either
    is left standing."""
    ordered = sorted(findings, key=lambda f: (f.start, -f.end))
    kept: list[Finding] = []
    for finding in ordered:
        if finding.end <= finding.start:
            continue
        if kept and finding.start < kept[-1].end:
            last = kept[-1]
            if finding.end > last.end:
                kept[-1] = Finding(last.start, finding.end, last.category)
            continue
        kept.append(finding)
    return kept


_LITERAL_MARKER = re.compile(r"\[(redacted:[^\[\]\n]{0,40})\]")


def defused(text: str) -> str:
    """`text` with whatever reads as a marker written in parentheses instead of brackets
    (the same length, so positions in it hold): a marker is never text a message contained,
    so mail cannot pass off its own words as something withheld."""
    if "[redacted:" not in text:
        return text
    return _LITERAL_MARKER.sub(r"(\1)", text)


def redacted(text: str, findings: Iterable[Finding]) -> str:
    """`text` with each finding replaced by its category's marker, and any marker the text
    itself held defused."""
    pieces: list[str] = []
    cursor = 0
    for finding in settled(findings):
        pieces.append(defused(text[cursor : finding.start]))
        pieces.append(finding.category.marker)
        cursor = finding.end
    pieces.append(defused(text[cursor:]))
    return "".join(pieces)


def redacted_with_spans(
    text: str, findings: Iterable[Finding], spans: Sequence[tuple[int, int]]
) -> tuple[str, list[tuple[int, int]]]:
    """`redacted(text, findings)` and `spans` moved to where they now stand. A span that
    starts or ends inside a finding is widened to its whole marker, so a highlight never
    splits one."""
    kept = settled(findings)
    starts = [f.start for f in kept]
    # For each finding: its end in `text`, and where its marker starts and ends in the result.
    placed_markers: list[tuple[int, int, int]] = []
    offset = 0
    for finding in kept:
        new_start = finding.start + offset
        new_end = new_start + len(finding.category.marker)
        placed_markers.append((finding.end, new_start, new_end))
        offset = new_end - finding.end

    def opening(position: int) -> int:
        index = bisect.bisect_right(starts, position) - 1
        if index < 0:
            return position
        old_end, new_start, new_end = placed_markers[index]
        return new_start if position < old_end else position + new_end - old_end

    def closing(position: int) -> int:
        index = bisect.bisect_left(starts, position) - 1
        if index < 0:
            return position
        old_end, _new_start, new_end = placed_markers[index]
        return new_end if position <= old_end else position + new_end - old_end

    return redacted(text, kept), [(opening(s), closing(e)) for s, e in spans]
