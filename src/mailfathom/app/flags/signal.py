"""Waking an account's continuous synchronization run when flag changes are written for it.

Within one process only: a run in another process finds the records on its next pass.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable


class MutationSignal:
    """Wakes an account's continuous synchronization run when records are written for it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._listeners: dict[str, list[Callable[[], None]]] = defaultdict(list)

    def listen(self, account_id: str, listener: Callable[[], None]) -> None:
        with self._lock:
            self._listeners[account_id].append(listener)

    def unlisten(self, account_id: str, listener: Callable[[], None]) -> None:
        with self._lock:
            listeners = self._listeners.get(account_id, [])
            if listener in listeners:
                listeners.remove(listener)
            if not listeners:
                self._listeners.pop(account_id, None)

    def listening(self, account_id: str) -> int:
        """How many listeners the account has (one per run that listens)."""
        with self._lock:
            return len(self._listeners.get(account_id, ()))

    def notify(self, account_id: str) -> None:
        with self._lock:
            listeners = list(self._listeners.get(account_id, ()))
        for listener in listeners:
            listener()
