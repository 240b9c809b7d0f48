"""Whether a synchronization pass is running in this process, for the work that yields to it.

The embedding worker shares the process's cores with synchronization; a model embedding a
batch takes both of them. So that embedding never slows a pass, the worker starts no batch
while a pass runs, and resumes when every pass has ended (`wait_idle`). A batch already
started finishes first, which bounds the delay a pass can see to one batch.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class PassActivity:
    def __init__(self) -> None:
        self._running = 0
        self._changed = threading.Condition()

    @contextmanager
    def running(self) -> Iterator[None]:
        """Held for the length of one pass (of an account, or of one watched folder)."""
        with self._changed:
            self._running += 1
        try:
            yield
        finally:
            with self._changed:
                self._running -= 1
                self._changed.notify_all()

    def busy(self) -> bool:
        with self._changed:
            return self._running > 0

    def wait_idle(self, stop: threading.Event, poll_seconds: float = 0.5) -> None:
        """Return once no pass runs, or once `stop` is set (looked at every `poll_seconds`)."""
        with self._changed:
            while self._running > 0 and not stop.is_set():
                self._changed.wait(poll_seconds)
