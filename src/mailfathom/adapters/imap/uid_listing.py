"""Planning commands whose one-line answers grow with a folder, so each answer stays bounded.

imaplib refuses a response line longer than its limit (1,000,000 bytes), and a `* SEARCH`
answer (RFC 3501 section 7.2.5), an `* ESEARCH ... ALL` answer (RFC 4731 section 3.1) and a
`* VANISHED (EARLIER)` answer (RFC 7162 section 3.2.10) each come on one line, naming up to
every UID of the folder. A command that asks about a window of at most `span` consecutive
UIDs gets an answer naming at most `span` of them, whatever the server's UIDs look like; these
helpers size such windows and read the sequence-sets the answers carry without trusting them.
"""

from __future__ import annotations

from collections.abc import Iterator

MAX_UID = 4_294_967_295  # RFC 3501 section 2.3.1.1: a UID is a 32-bit value
# The words of an answer line around its UIDs, CRLF included: `* ESEARCH (TAG "A123") UID ALL`,
# `* VANISHED (EARLIER)`, or a SEARCH answer's `(MODSEQ n)` (RFC 7162 section 3.1.5).
_OVERHEAD = 128


def window_span(budget: int, highest: int) -> int:
    """How many consecutive UIDs, none above `highest`, one command may ask about so that an
    answer naming every one of them, each written out with a separator, fits in `budget`
    bytes."""
    return max(1, (budget - _OVERHEAD) // (len(str(highest)) + 1))


def fits_whole(budget: int, count: int) -> bool:
    """Whether an answer naming `count` UIDs of any width fits in `budget` bytes."""
    return count * (len(str(MAX_UID)) + 1) + _OVERHEAD <= budget


def windows(low: int, high: int, budget: int) -> Iterator[tuple[int, int]]:
    """Consecutive UID windows covering `low` to `high`, each small enough for `budget`."""
    span = window_span(budget, high)
    start = max(1, low)
    while start <= high:
        end = min(high, start + span - 1)
        yield start, end
        start = end + 1


def uids_in_set(text: str, low: int, high: int, most: int) -> list[int]:
    """The UIDs between `low` and `high` that a sequence-set such as "1:3,7" (RFC 3501
    section 9) names, ascending. The set is the server's: ranges are clipped to the window
    the command asked about before any is expanded, and a set naming more than `most` UIDs
    there, more than the command could honestly have found, is refused with ValueError."""
    found: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        first, _, last = part.partition(":")
        start, end = int(first), int(last or first)
        start, end = max(low, min(start, end)), min(high, max(start, end))
        if end < start:
            continue
        if len(found) + (end - start + 1) > most:
            raise ValueError("the answer names more UIDs than the window holds")
        found.update(range(start, end + 1))
    return sorted(found)
