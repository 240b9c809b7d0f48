"""Bounded extracts of a body around what a search matched.

An extract is message text and nothing else: matched runs are wrapped in `**`, a cut end is
marked with `…`, runs of white space are folded to one space. Nothing is summarized or
interpreted, so a caller reads it as data written by whoever wrote the mail.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

MAX_SNIPPETS = 3
SNIPPET_CHARACTERS = 160
_LEAD = 50
_WORD = re.compile(r"\w+")
_SPACE = re.compile(r"\s+")


def query_terms(words: Sequence[str]) -> list[str]:
    """The word characters of a query, as the index tokenizes them, lower-cased."""
    terms: list[str] = []
    for word in words:
        terms.extend(t.lower() for t in _WORD.findall(word))
    return sorted(set(terms), key=len, reverse=True)


def extracts(body: str, terms: Sequence[str]) -> tuple[str, ...]:
    if not body or not terms:
        return ()
    text = _SPACE.sub(" ", body).strip()
    pattern = re.compile(
        r"(?<!\w)(?:" + "|".join(re.escape(t) for t in terms) + r")(?!\w)", re.IGNORECASE
    )
    spans = [m.span() for m in pattern.finditer(text)]
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
    return tuple(result)


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
