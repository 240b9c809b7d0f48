"""Ctrl-C in a command that waits for a person and writes secrets (`init`, `account consent`).

While `handled` is in force the first SIGINT raises `KeyboardInterrupt` as usual, and any
further one is ignored, so what the command does on its way out (removing a refresh token
it wrote) is not itself cut short. A write that must happen whole, or be followed by what
makes it usable, runs under `held`: an interrupt arriving meanwhile waits for the end of
the block, so the command knows exactly what it wrote when it stops.

Only the main thread can set a signal handler; elsewhere both are without effect, and
SIGINT keeps its ordinary meaning.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType

import typer
from rich.console import Console

# The shell's status for a command ended by SIGINT (128 + 2).
INTERRUPTED_STATUS = 130


@dataclass
class _Interrupts:
    installed: bool = False
    holding: bool = False
    pending: bool = False
    raised: bool = False

    def handle(self, signum: int, frame: FrameType | None) -> None:
        if self.raised:
            return
        if self.holding:
            self.pending = True
            return
        self.raised = True
        raise KeyboardInterrupt


_interrupts = _Interrupts()


@contextmanager
def handled() -> Iterator[None]:
    """Ctrl-C interrupts once within the block."""
    if threading.current_thread() is not threading.main_thread() or _interrupts.installed:
        yield
        return
    previous = signal.signal(signal.SIGINT, _interrupts.handle)
    _interrupts.installed = True
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        _interrupts.installed = _interrupts.holding = _interrupts.pending = False
        _interrupts.raised = False


@contextmanager
def held(*, then_raise: bool = True) -> Iterator[None]:
    """Ctrl-C during the block takes effect at its end (`then_raise`), or not at all: for
    the last steps of a command, which finish faster than anybody could act on them."""
    if not _interrupts.installed or _interrupts.holding:
        yield
        return
    _interrupts.holding = True
    try:
        yield
    finally:
        _interrupts.holding = False
    if _interrupts.pending:
        _interrupts.pending = False
        if then_raise:
            _interrupts.raised = True
            raise KeyboardInterrupt


def interrupted(console: Console, line: str) -> typer.Exit:
    """Say `line` (on a line of its own after the terminal's `^C`) and end with 130."""
    if console.is_terminal:
        console.print()
    console.print(line, markup=False, highlight=False, soft_wrap=True)
    return typer.Exit(code=INTERRUPTED_STATUS)
