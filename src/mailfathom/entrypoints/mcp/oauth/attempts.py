"""One attempt at a time at something an authorization server is asked, shared by whoever
needs it meanwhile.

A caller finding an attempt under way waits for it and takes its outcome instead of starting
another, however long it took, so a slow or failing server costs one attempt, not one per
waiting request. A new attempt starts no sooner than `interval` after the last one ended
(not began): an attempt that failed slowly is not followed at once by the next.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio


class Attempts:
    def __init__(self, interval: float, clock: Callable[[], float]) -> None:
        self._interval = interval
        self._clock = clock
        self._lock = anyio.Lock()
        self._ended = 0
        self._ended_at: float | None = None

    @property
    def under_way(self) -> bool:
        return self._lock.locked()

    def may_start(self) -> bool:
        return self._ended_at is None or self._clock() - self._ended_at >= self._interval

    async def run(self, attempt: Callable[[], Awaitable[None]]) -> None:
        """Run `attempt`, unless one ended while this caller waited for it or too recently:
        the caller then takes what that one left."""
        seen = self._ended
        async with self._lock:
            if self._ended != seen or not self.may_start():
                return
            try:
                await attempt()
            finally:
                self._ended += 1
                self._ended_at = self._clock()
