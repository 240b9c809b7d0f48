"""The journal of answered calls: the calls answered while a write is in flight wait for it
and are kept together, in the order they were answered, by the next write."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from datetime import UTC, datetime

from mailfathom.app.console.access_ports import ToolCallRecord
from mailfathom.app.console.tool_calls import ToolCalls
from mailfathom.entrypoints.mcp.call_journal import CallJournal

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


class HeldLog:
    """A log whose first write waits until `release` is set."""

    def __init__(self, writes_wanted: int = 2) -> None:
        self.wanted = writes_wanted
        self.writes: list[list[str]] = []
        self.entered = threading.Event()
        self.release = threading.Event()
        self.done = threading.Event()

    def append(self, calls: Sequence[ToolCallRecord], keep: int) -> None:
        if not self.writes:
            self.entered.set()
            assert self.release.wait(30)
        self.writes.append([c.tool for c in calls])
        if len(self.writes) >= self.wanted:
            self.done.set()

    def newest(self, *_: object, **__: object) -> list[ToolCallRecord]:
        return []

    def callers(self) -> list[str]:
        return []


def test_calls_answered_during_a_write_are_kept_together_in_order() -> None:
    log = HeldLog()
    journal = CallJournal(ToolCalls(log, clock=lambda: NOW))

    async def answer() -> None:
        journal("t0", "agent", "success", None, 0.001)
        assert await asyncio.to_thread(log.entered.wait, 30)
        for n in range(1, 6):
            journal(f"t{n}", "agent", "success", None, 0.001)
        log.release.set()
        assert await asyncio.to_thread(log.done.wait, 30)

    asyncio.run(answer())
    assert log.writes == [["t0"], ["t1", "t2", "t3", "t4", "t5"]]


def test_what_waits_is_bounded_by_the_newest() -> None:
    log = HeldLog()
    journal = CallJournal(ToolCalls(log, clock=lambda: NOW), waiting_at_most=3)

    async def answer() -> None:
        journal("t0", "agent", "success", None, 0.001)
        assert await asyncio.to_thread(log.entered.wait, 30)
        for n in range(1, 9):
            journal(f"t{n}", "agent", "success", None, 0.001)
        log.release.set()
        assert await asyncio.to_thread(log.done.wait, 30)

    asyncio.run(answer())
    assert log.writes == [["t0"], ["t6", "t7", "t8"]]


def test_calls_answered_within_the_gathering_time_are_one_write() -> None:
    log = HeldLog(writes_wanted=1)
    log.release.set()
    journal = CallJournal(ToolCalls(log, clock=lambda: NOW))

    async def answer() -> None:
        journal("t0", "agent", "success", None, 0.001)
        # The loop is not given back here: a write that waits for the gathering time to
        # pass on the loop has not begun, whatever this wait lasts.
        log.entered.wait(0.5)
        for n in range(1, 4):
            journal(f"t{n}", "agent", "success", None, 0.001)
        assert await asyncio.to_thread(log.done.wait, 30)

    asyncio.run(answer())
    assert log.writes == [["t0", "t1", "t2", "t3"]]


def test_stopping_writes_what_is_still_gathering() -> None:
    log = HeldLog(writes_wanted=1)
    log.release.set()
    journal = CallJournal(ToolCalls(log, clock=lambda: NOW))

    async def answer() -> None:
        journal("t0", "agent", "success", None, 0.001)
        journal.settle()

    asyncio.run(answer())
    assert log.writes == [["t0"]]


def test_a_loop_that_ended_without_settling_leaves_the_journal_writing() -> None:
    log = HeldLog(writes_wanted=1)
    log.release.set()
    journal = CallJournal(ToolCalls(log, clock=lambda: NOW))

    async def answer_and_end() -> None:
        journal("t0", "agent", "success", None, 0.001)  # its write planned on this loop

    asyncio.run(answer_and_end())  # the loop ends before the gathering time has passed

    async def answer() -> None:
        journal("t1", "agent", "success", None, 0.001)
        assert await asyncio.to_thread(log.done.wait, 30)

    asyncio.run(answer())
    assert log.writes == [["t0", "t1"]]


def test_a_call_answered_after_settling_is_written_at_once() -> None:
    log = HeldLog(writes_wanted=1)
    log.release.set()
    journal = CallJournal(ToolCalls(log, clock=lambda: NOW))

    async def answer() -> None:
        journal.settle()
        journal("t0", "agent", "success", None, 0.001)
        # Written before the call returned: no timer of a stopping loop holds it.
        assert log.writes == [["t0"]]

    asyncio.run(answer())
