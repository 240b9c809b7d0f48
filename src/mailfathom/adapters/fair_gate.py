"""A bound on how many threads of a process do one kind of work at once, served in arrival
order.

`threading.Semaphore` lets a thread that has just given its turn back take it again before
a thread already waiting wakes up, so a few busy threads (readers in a loop) can keep
another (a writer) waiting for as long as they stay busy. Here a freed turn is handed to the
longest waiter directly.
"""

from __future__ import annotations

import threading
from collections import deque
from types import TracebackType


class FairGate:
    def __init__(self, turns: int) -> None:
        if turns < 1:
            raise ValueError("a gate needs at least one turn")
        self._lock = threading.Lock()
        self._free = turns
        self._turns = turns
        # Each waiter's own lock, held until a freed turn is handed to it.
        self._waiters: deque[threading.Lock] = deque()

    @property
    def waiting(self) -> int:
        with self._lock:
            return len(self._waiters)

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        with self._lock:
            if self._free and not self._waiters:
                self._free -= 1
                return True
            if not blocking:
                return False
            handed = threading.Lock()
            handed.acquire()
            self._waiters.append(handed)
        try:
            if handed.acquire(timeout=timeout):
                return True
        except BaseException:
            # Interrupted (a Ctrl-C in the main thread): leave the queue, and pass on a turn
            # handed over meanwhile, so that no turn goes to a waiter who is gone.
            self._leave(handed, keep=False)
            raise
        return self._leave(handed, keep=True)

    def _leave(self, handed: threading.Lock, *, keep: bool) -> bool:
        """Take the waiter `handed` out of the queue; whether a turn was handed to it (kept
        when `keep`, otherwise given back)."""
        with self._lock:
            if handed in self._waiters:
                self._waiters.remove(handed)
                return False
        # The turn was handed over before the waiter left.
        if not keep:
            self.release()
        return True

    def release(self) -> None:
        with self._lock:
            if self._waiters:
                self._waiters.popleft().release()
                return
            if self._free >= self._turns:
                raise ValueError("a gate released more often than it was taken")
            self._free += 1

    def __enter__(self) -> FairGate:
        self.acquire()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.release()
