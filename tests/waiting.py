"""Waiting on a condition with a deadline, instead of sleeping for a fixed time."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_for(
    condition: Callable[[], T | None], what: str, *, timeout: float = 60.0, interval: float = 0.05
) -> T:
    """The first true value `condition` returns, checked every `interval` seconds; fails with
    `what` (which says what did not happen, never mail content) once `timeout` has passed."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"{what} within {timeout:g} s"
        time.sleep(interval)
