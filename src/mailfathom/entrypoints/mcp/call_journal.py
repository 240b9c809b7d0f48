"""Keeping each answered tool call for the console's recent-calls page, without ever holding
up or failing the call.

The record is made when the call is answered and handed to a worker thread of the event
loop's default executor, which is not awaited: a slow or locked store delays the record,
never the answer, and a cancelled call is still recorded. A write begins a short gathering
time after the first record it keeps (a timer on the loop, not a waiting thread), and one
write is in flight at a time; the records of calls answered meanwhile wait and are kept
together, so under load the journal costs one transaction per gathering time rather than
one every call or two. `settle` writes what is still gathering when the process stops, and
from then on a call is written as it is answered; a write planned on a loop that stopped
without `settle` is taken over by the next call.
What waits is bounded by what the log keeps (the newest records win). A write that fails is
logged by its code and the failure's type alone (a database's message can quote the values
it was handed), and its records are dropped. With no running event loop the write happens
in place, under the same rule."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading

import structlog

from mailfathom.app.console.access_ports import ToolCallRecord
from mailfathom.app.console.tool_calls import KEPT, ToolCalls
from mailfathom.domain.codes import Code

log = structlog.get_logger("mailfathom.mcp")

# Long enough to gather a batch under load, short beside reading the recent-calls page.
GATHERING_SECONDS = 0.1


class CallJournal:
    def __init__(self, calls: ToolCalls, waiting_at_most: int = KEPT) -> None:
        self._calls = calls
        self._most = waiting_at_most
        self._lock = threading.Lock()
        self._waiting: list[ToolCallRecord] = []
        self._writing = False
        self._gathering: asyncio.TimerHandle | None = None
        self._gathering_on: asyncio.AbstractEventLoop | None = None
        self._settled = False

    def __call__(
        self, tool: str, caller: str | None, outcome: str, code: int | None, seconds: float
    ) -> None:
        record = self._calls.made(tool, caller, outcome, code, seconds)
        with self._lock:
            self._waiting.append(record)
            if len(self._waiting) > self._most:
                del self._waiting[: -self._most]
            if self._writing and not self._stranded():
                return
            self._writing = True
            self._gathering = self._gathering_on = None
            settled = self._settled
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is None or settled:  # no loop, or one that is stopping: write in place
            self._write()
            return
        with self._lock:
            self._gathering_on = loop
            self._gathering = loop.call_later(GATHERING_SECONDS, self._begin, loop)

    def _stranded(self) -> bool:
        """Whether the write in hand waits on a timer of a loop that has stopped, so will
        never begin (held under `_lock`)."""
        loop = self._gathering_on
        return self._gathering is not None and loop is not None and not loop.is_running()

    def _begin(self, loop: asyncio.AbstractEventLoop) -> None:
        with self._lock:
            self._gathering = self._gathering_on = None
        try:
            pending = loop.run_in_executor(None, self._write)
        except RuntimeError:  # the loop's executor is shut down: the process is stopping
            self._write()
            return
        pending.add_done_callback(_settled)

    def settle(self) -> None:
        """Write now what is still gathering (on the loop's thread, as a process stops); a
        call answered from now on is written at once, its loop being about to stop."""
        with self._lock:
            self._settled = True
            gathering, self._gathering, self._gathering_on = self._gathering, None, None
        if gathering is not None:
            gathering.cancel()
            self._write()

    def _write(self) -> None:
        """Keep what waits, batch after batch, until nothing does."""
        while True:
            with self._lock:
                batch, self._waiting = self._waiting, []
                if not batch:
                    self._writing = False
                    return
            try:
                self._calls.keep(batch)
            except Exception as error:
                log.error(
                    "tool.call_not_recorded",
                    code=int(Code.UNDIAGNOSED),
                    error_type=type(error).__name__,
                )


def _settled(done: asyncio.Future[None] | concurrent.futures.Future[None]) -> None:
    if not done.cancelled():
        done.exception()
