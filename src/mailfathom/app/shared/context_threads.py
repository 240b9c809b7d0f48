"""Threads that carry on the context of the code that starts them.

A thread begins in an empty `contextvars` context; work that started it under a context (a
lease's fence, see `app.sync.lease_ports.Fencing`) must go on under the same one in every
thread it starts, or its writes would escape it."""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from typing import Any


def context_thread(target: Callable[..., Any], *args: Any, name: str) -> threading.Thread:
    """A daemon thread (not started) running `target(*args)` in a copy of the current
    context."""
    context = contextvars.copy_context()
    return threading.Thread(target=context.run, args=(target, *args), daemon=True, name=name)
