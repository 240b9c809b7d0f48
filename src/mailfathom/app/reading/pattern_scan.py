"""The regular-expression pass of search_emails: which candidates a pattern matches.

A pattern is tried on each candidate's sender address, sender display name, subject and
indexed body text, each on its own (so `^` and `$` mean the start and end of one of them);
a match in any of them keeps the candidate. The engine behind `TextPattern` matches in
linear time, and the scan is bounded twice more: by the number of candidates it examines and
by a deadline on the clock, checked between candidates, so one request's cost is known
before it starts whatever the pattern and the mailbox. Stopping at a bound is reported, never
silent; stopping because the window of results is full is not a cut.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from mailfathom.app.reading.ports import TextPattern
from mailfathom.app.shared.stored_mail import SummaryRow
from mailfathom.app.shared.stored_mail_ports import MailboxReadView

# Bodies are read this many at a time, so the deadline is checked before each read as well.
_BATCH = 50
# Spans a pattern contributes to a match's extracts at most.
SPANS_PER_BODY = 16


@dataclass(frozen=True, slots=True)
class Candidate:
    summary: SummaryRow
    rank: float


@dataclass(frozen=True, slots=True)
class PatternHit:
    candidate: Candidate
    body: str
    spans: tuple[tuple[int, int], ...]


@dataclass(frozen=True, slots=True)
class ScanOutcome:
    hits: tuple[PatternHit, ...]
    scanned: int
    cut: bool


@dataclass(frozen=True, slots=True)
class ScanBounds:
    seconds: float
    clock: Callable[[], float]


def scan(
    view: MailboxReadView,
    folder_ids: Sequence[int],
    pattern: TextPattern,
    candidates: Sequence[Candidate],
    *,
    more_remain: bool,
    limit: int,
    bounds: ScanBounds,
) -> ScanOutcome:
    """Candidates in the order given, kept while the pattern matches, until `limit` hits,
    the candidates run out, or a bound stops the scan. `more_remain` says candidates beyond
    those given exist (the candidate bound left them out)."""
    deadline = bounds.clock() + bounds.seconds
    hits: list[PatternHit] = []
    scanned = 0
    for start in range(0, len(candidates), _BATCH):
        batch = candidates[start : start + _BATCH]
        if bounds.clock() >= deadline:
            return ScanOutcome(tuple(hits), scanned, True)
        texts = view.indexed_texts([c.summary.seq for c in batch], folder_ids)
        for candidate in batch:
            if bounds.clock() >= deadline:
                return ScanOutcome(tuple(hits), scanned, True)
            scanned += 1
            hit = _tried(pattern, candidate, texts.get(candidate.summary.seq, ""))
            if hit is None:
                continue
            hits.append(hit)
            if len(hits) >= limit:
                return ScanOutcome(tuple(hits), scanned, False)
    return ScanOutcome(tuple(hits), scanned, more_remain)


def _tried(pattern: TextPattern, candidate: Candidate, body: str) -> PatternHit | None:
    spans = tuple(pattern.spans(body, SPANS_PER_BODY)) if body else ()
    if spans:
        return PatternHit(candidate, body, spans)
    s = candidate.summary
    for field in (s.sender_address, s.sender_name, s.subject):
        if field and pattern.found_in(field):
            return PatternHit(candidate, body, ())
    # An empty match (a pattern such as `x*`) matches every text, the empty one included.
    if pattern.found_in(body):
        return PatternHit(candidate, body, ())
    return None
