"""list_emails' `contains`: a case-insensitive substring of the body text, found by reading
bodies, with the lexical index narrowing which bodies are read.

The index holds words, and a substring may begin or end inside one, so only the fragment's
inner words (letters and digits with a space on both sides within the fragment) are
certain to be whole words of any body that carries it; requiring them of the index keeps
every such body and leaves out most others. Only ASCII words are asked for: the index and
case folding may disagree about other letters (a body's "ß" is no "ss" to the index). The
bodies left are read in timeline order and checked as far as the index holds them (the
same text a search reads), at most MAX_CONTAINS_BODIES per page. When that bound ends a
page early the page says so and its cursor continues after the last body read, so walking
on loses nothing; a cut that fell exactly at the end of the timeline leads to an empty page.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from mailfathom.app.shared.stored_mail import SummaryFilter, SummaryRow, TimelinePosition
from mailfathom.app.shared.stored_mail_ports import MailboxReadView
from mailfathom.domain import text_rules
from mailfathom.domain.codes import Code
from mailfathom.domain.errors import Refusal

MAX_CONTAINS_CHARACTERS = 256
MAX_CONTAINS_BODIES = 2000
_BATCH = 100


def check(fragment: str) -> None:
    """Refuses a fragment no filter can use, never repeating it."""
    if not fragment.strip():
        raise Refusal(Code.FILTER_NOT_ACCEPTED, "contains is blank.")
    if len(fragment) > MAX_CONTAINS_CHARACTERS:
        raise Refusal(
            Code.FILTER_NOT_ACCEPTED,
            f"contains is longer than {MAX_CONTAINS_CHARACTERS} characters.",
        )
    if not text_rules.is_one_line(fragment):
        raise Refusal(Code.FILTER_NOT_ACCEPTED, "contains carries a control character.")


def inner_words(fragment: str) -> tuple[str, ...]:
    """Words of `fragment` any body carrying it holds whole (see the module docstring)."""
    pieces = fragment.split(" ")
    return tuple(p.lower() for p in pieces[1:-1] if p and p.isascii() and p.isalnum())


@dataclass(frozen=True, slots=True)
class BodyScan:
    rows: tuple[SummaryRow, ...]
    examined: int
    # The bound stopped the scan with bodies left unread; `resume` is where to go on.
    cut: bool
    resume: TimelinePosition | None


def scan(
    view: MailboxReadView,
    selection: SummaryFilter,
    fragment: str,
    *,
    newest_first: bool,
    after: TimelinePosition | None,
    wanted: int,
    ceiling: int,
) -> BodyScan:
    """Up to `wanted` rows after `after` whose body carries `fragment` in any case, reading
    at most `ceiling` bodies."""
    folded = fragment.casefold()
    narrowed = replace(selection, indexed_words=inner_words(fragment))
    found: list[SummaryRow] = []
    examined = 0
    position = after
    while examined < ceiling:
        asked = min(_BATCH, ceiling - examined)
        batch = view.summaries(narrowed, newest_first=newest_first, after=position, limit=asked)
        texts = view.indexed_texts([r.seq for r in batch], selection.folder_ids)
        for row in batch:
            examined += 1
            position = TimelinePosition(row.received_at, row.seq)
            if folded in texts.get(row.seq, "").casefold():
                found.append(row)
                if len(found) >= wanted:
                    return BodyScan(tuple(found), examined, False, None)
        if len(batch) < asked:
            return BodyScan(tuple(found), examined, False, None)
    return BodyScan(tuple(found), examined, True, position)


def fingerprint(fragment: str | None) -> tuple[object, ...]:
    """What the filter adds to a cursor's selection digest."""
    return () if fragment is None else ("contains", fragment.casefold())
