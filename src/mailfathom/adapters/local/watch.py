"""Watching local Maildir folders for arrivals between polls.

Every change a Maildir folder can undergo (a delivery linked into `new`, a message moved into
or out of a folder, a flag change renaming a file in `cur`, a removal) changes the
modification time of the directory holding the entry, so comparing those times with the ones
taken before a pass tells whether another pass is needed, at the cost of two `stat` calls per
folder.

A directory's time has the kernel's clock granularity: an entry made within the same tick
as the mark, after it, leaves the time unchanged. A mark is therefore treated as uncertain
while any of its times is that recent, and answered as changed once the tick has surely
passed (the approach Git takes with its index), so such a change costs one pass more rather
than waiting for the next poll.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

# Longer than any kernel's timestamp granularity (a jiffy is at most 10 ms).
_UNCERTAIN_NS = 100_000_000


@dataclass(frozen=True, slots=True)
class _Mark:
    times: tuple[int, ...]
    taken_ns: int
    uncertain: bool


class MaildirWatch:
    """A `ChangeWatch` over the `new` and `cur` directories of some Maildir folders."""

    def __init__(self, folders: Sequence[Path]) -> None:
        self._directories = tuple(f / sub for f in folders for sub in ("new", "cur"))

    def _times(self) -> tuple[int, ...]:
        times = []
        for directory in self._directories:
            try:
                times.append(os.stat(directory).st_mtime_ns)
            except FileNotFoundError:
                times.append(-1)
        return tuple(times)

    def mark(self) -> object:
        taken = time.time_ns()
        times = self._times()
        return _Mark(times, taken, any(t >= taken - _UNCERTAIN_NS for t in times))

    def changed_since(self, mark: object) -> bool:
        if not isinstance(mark, _Mark):
            return True
        if self._times() != mark.times:
            return True
        return mark.uncertain and time.time_ns() > mark.taken_ns + _UNCERTAIN_NS
