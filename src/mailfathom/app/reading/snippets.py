"""Bounded extracts of a body around what a search matched.

An extract is message text and nothing else: matched runs are wrapped in `**`, a cut end is
marked with `…`, runs of white space are folded to one space. Nothing is summarized or
interpreted, so a caller reads it as data written by whoever wrote the mail.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

MAX_SNIPPETS = 3
SNIPPET_CHARACTERS = 160
_LEAD = 50
_WORD = re.compile(r"\w+")


def query_terms(words: Sequence[str]) -> list[str]:
    """The word characters of a query, as the index tokenizes them, lower-cased."""
    terms: list[str] = []
    for word in words:
        terms.extend(t.lower() for t in _WORD.findall(word))
    return sorted(set(terms), key=len, reverse=True)


# Folding white space costs a pass over the text, and the extracts usually lie near the start
# of a body: the body is folded a prefix at a time, growing by _GROWTH, until the prefix holds
# every extract with room to spare (or is the whole body).
_FIRST_PREFIX = 4096
_GROWTH = 4


@functools.lru_cache(maxsize=64)
def _pattern(terms: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(
        r"(?<!\w)(?:" + "|".join(re.escape(t) for t in terms) + r")(?!\w)", re.IGNORECASE
    )


def _is_word(character: str) -> bool:
    r"""What `\w` matches in a text pattern."""
    return character.isalnum() or character == "_"


def _spans(text: str, terms: Sequence[str]) -> list[tuple[int, int]]:
    """Where the terms occur in `text` as whole words, ignoring case, in order.

    What `_pattern(terms).finditer(text)` finds, located with `str.find` on the lower-cased
    text, which is several times faster than a case-insensitive regular expression. Terms
    are words, so two whole-word occurrences can only overlap by starting at the same place,
    where the longer one is the one that ends at a word boundary. When lower-casing changes
    the length of the text (a few characters such as U+0130 do), positions would no longer
    line up, and the regular expression is used instead."""
    lowered = text.lower()
    if len(lowered) != len(text):
        return [m.span() for m in _pattern(tuple(terms)).finditer(text)]
    found: list[tuple[int, int]] = []
    for term in terms:
        start = lowered.find(term)
        while start != -1:
            end = start + len(term)
            if _whole(lowered, start, end):
                found.append((start, end))
            start = lowered.find(term, start + 1)
    found.sort(key=lambda span: (span[0], -span[1]))
    spans: list[tuple[int, int]] = []
    for span in found:
        if not spans or span[0] >= spans[-1][1]:
            spans.append(span)
    return spans


def _first_end(text: str, terms: Sequence[str]) -> int | None:
    """Where the first whole-word occurrence of a term in `text` ends (the end of `_spans`'s
    first span), or None: one occurrence per term is looked for, not every one."""
    lowered = text.lower()
    if len(lowered) != len(text):
        found = _pattern(tuple(terms)).search(text)
        return None if found is None else found.end()
    first: tuple[int, int] | None = None
    for term in terms:
        start = lowered.find(term)
        while start != -1 and (first is None or start <= first[0]):
            end = start + len(term)
            if _whole(lowered, start, end):
                if first is None or (start, -end) < (first[0], -first[1]):
                    first = (start, end)
                break
            start = lowered.find(term, start + 1)
    return None if first is None else first[1]


def _last_end(text: str, terms: Sequence[str]) -> int:
    """Where the last whole-word occurrence of a term in `text` ends, looked for from the
    end (`text` holds at least one; when lower-casing changes its length, its length)."""
    lowered = text.lower()
    if len(lowered) != len(text):
        return len(text)
    last = 0
    for term in terms:
        start = lowered.rfind(term)
        while start != -1 and start + len(term) > last:
            end = start + len(term)
            if _whole(lowered, start, end):
                last = end
                break
            start = lowered.rfind(term, 0, end - 1)
    return last


def _whole(lowered: str, start: int, end: int) -> bool:
    """Whether `lowered[start:end]` is a whole word of `lowered`."""
    return (start == 0 or not _is_word(lowered[start - 1])) and (
        end == len(lowered) or not _is_word(lowered[end])
    )


def extracts(body: str, terms: Sequence[str]) -> tuple[str, ...]:
    if not body or not terms:
        return ()
    # Folding changes white space only, never where a word starts or ends, so a body without
    # a match in its raw text has none once folded (the words of a match may have been found
    # in the subject or an address instead).
    first_end = _first_end(body, terms)
    if first_end is None:
        return ()
    # A prefix is trusted only up to this far from its cut: a match running over the cut, or
    # a white space run continuing past it, lies within it.
    margin = max(len(t) for t in terms) + 2
    last_end: int | None = None  # looked for once a prefix shows fewer extracts than wanted
    size = max(_FIRST_PREFIX, 2 * first_end)
    while True:
        whole = size >= len(body)
        # split() with no separator cuts at runs of the characters `\s` matches and drops
        # them at both ends: the fold, in one pass. A prefix loses a trailing run, which lies
        # within the margin.
        text = " ".join((body if whole else body[:size]).split())
        found, reach = _windows(text, _spans(text, terms))
        # Enough when the extracts end clear of the prefix's cut and either they are all
        # there are or every match of the body lies in the prefix, clear of its cut: the
        # rest of the body would add nothing. (A word cut in two at the cut may look like
        # a match; its extract would run to the cut.)
        if whole:
            return tuple(found)
        if reach + margin < len(text):
            if len(found) == MAX_SNIPPETS:
                return tuple(found)
            if last_end is None:
                last_end = _last_end(body, terms)
            if last_end + margin <= size:
                return tuple(found)
        size *= _GROWTH


def _windows(text: str, spans: Sequence[tuple[int, int]]) -> tuple[list[str], int]:
    """Up to MAX_SNIPPETS marked windows of `text`, and where the last of them ends."""
    result: list[str] = []
    covered_until = -1
    for start, _end in spans:
        if start < covered_until:
            continue
        lo = max(0, start - _LEAD)
        hi = min(len(text), lo + SNIPPET_CHARACTERS)
        inside = [(s, e) for s, e in spans if s >= lo and e <= hi]
        result.append(_mark(text, lo, hi, inside))
        covered_until = hi
        if len(result) == MAX_SNIPPETS:
            break
    return result, max(covered_until, 0)


def _mark(text: str, lo: int, hi: int, spans: Sequence[tuple[int, int]]) -> str:
    pieces: list[str] = ["…" if lo > 0 else ""]
    cursor = lo
    for start, end in _merged(spans):
        pieces.append(text[cursor:start])
        pieces.append("**" + text[start:end] + "**")
        cursor = end
    pieces.append(text[cursor:hi])
    pieces.append("…" if hi < len(text) else "")
    return "".join(pieces)


def _merged(spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Adjacent matches (separated by white space only) become one marked run."""
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start - merged[-1][1] <= 1:
            merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def marked_extracts(body: str, spans: Sequence[tuple[int, int]]) -> tuple[str, ...]:
    """Up to MAX_SNIPPETS extracts of `body` around `spans` (where a pattern matched, in
    order), each run marked as `extracts` marks words and its white space folded. A run
    longer than an extract can show is marked as far as the extract reaches."""
    if not body or not spans:
        return ()
    longest = SNIPPET_CHARACTERS - _LEAD
    clipped = [(s, min(e, s + longest)) for s, e in spans]
    found, _ = _windows(body, clipped)
    return tuple(" ".join(f.split()) for f in found)
