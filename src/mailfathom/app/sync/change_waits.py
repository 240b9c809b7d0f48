"""How a continuous run waits for owner changes recorded in this process (a wake) or in
another one (read from the store every `LEDGER_SLICE` seconds)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from mailfathom.app.sync.ports import OwnerChanges

WAKE_SLICE = 0.5  # how long a wait for recorded changes goes without checking `stop`
LEDGER_SLICE = 1.0  # how often a waiting run reads the store for changes recorded elsewhere


def recorded_since(changes: OwnerChanges, account_id: str) -> Callable[[], bool]:
    """Whether the store's open changes of the account differ from what they are now (read
    before a carry, so that what is recorded while it runs is not taken for carried)."""
    seen = changes.mark(account_id)

    def recorded() -> bool:
        try:
            return changes.mark(account_id) != seen
        except Exception:  # a store out of reach is noticed by the next carry, not here
            return False

    return recorded


def wait_for_changes(
    wake: threading.Event,
    stop: threading.Event,
    seconds: float,
    recorded: Callable[[], bool] | None = None,
) -> None:
    """Until `wake` or `stop` is set, `recorded` answers true, or `seconds` have passed."""
    started = time.monotonic()
    checked = started
    while not (wake.is_set() or stop.is_set()):
        now = time.monotonic()
        if now - started >= seconds:
            return
        if recorded is not None and now - checked >= LEDGER_SLICE:
            checked = now
            if recorded():
                return
        wake.wait(min(WAKE_SLICE, seconds - (now - started)))
