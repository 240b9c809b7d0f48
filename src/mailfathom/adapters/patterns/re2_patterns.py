"""Regular expressions through RE2, whose automata match in time linear in the text.

RE2 refuses what it cannot match that way (backreferences, lookaround) instead of falling
back to backtracking, which is the point: a pattern from a caller can make a backtracking
engine run for hours on one body. Its own error log would print the pattern, so it is
turned off; its error text quotes the pattern too, so it is dropped here.
"""

from __future__ import annotations

from typing import Any

import re2

from mailfathom.app.reading.ports import TextPattern

# The compiled program's memory bound (RE2's default): a pattern whose automaton would not
# fit, such as nested counted repetitions, is refused at compile time.
_PROGRAM_OCTETS = 8 << 20


class _Re2Pattern(TextPattern):
    def __init__(self, compiled: Any) -> None:
        self._compiled = compiled

    def found_in(self, text: str) -> bool:
        return self._compiled.search(text) is not None

    def spans(self, text: str, limit: int) -> list[tuple[int, int]]:
        found: list[tuple[int, int]] = []
        for match in self._compiled.finditer(text):
            start, end = match.span()
            if end > start:
                found.append((start, end))
                if len(found) >= limit:
                    break
        return found


class Re2PatternCompiler:
    """`PatternCompiler` on RE2, ignoring case unless the pattern says `(?-i)`."""

    def compile(self, pattern: str) -> TextPattern | None:
        options = re2.Options()
        options.log_errors = False
        options.case_sensitive = False
        options.max_mem = _PROGRAM_OCTETS
        try:
            compiled = re2.compile(pattern, options)
        except re2.error:
            return None
        return _Re2Pattern(compiled)
