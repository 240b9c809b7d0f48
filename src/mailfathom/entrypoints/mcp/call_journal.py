"""Keeping each answered tool call for the console's recent-calls page, without ever holding
up or failing the call.

The write is handed to a worker thread of the event loop's default executor and not awaited:
a slow or locked store delays the record, never the answer, and a cancelled call is still
recorded. A write that fails is logged by its code and the failure's type alone (a
database's message can quote the values it was handed). With no running event loop the
write happens in place, under the same rule."""

from __future__ import annotations

import asyncio
import concurrent.futures

import structlog

from mailfathom.app.console.tool_calls import ToolCalls
from mailfathom.domain.codes import Code

log = structlog.get_logger("mailfathom.mcp")


class CallJournal:
    def __init__(self, calls: ToolCalls) -> None:
        self._calls = calls

    def __call__(
        self, tool: str, caller: str | None, outcome: str, code: int | None, seconds: float
    ) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._write(tool, caller, outcome, code, seconds)
            return
        pending = loop.run_in_executor(None, self._write, tool, caller, outcome, code, seconds)
        pending.add_done_callback(_settled)

    def _write(
        self, tool: str, caller: str | None, outcome: str, code: int | None, seconds: float
    ) -> None:
        try:
            self._calls.record(tool, caller, outcome, code, seconds)
        except Exception as error:
            log.error(
                "tool.call_not_recorded",
                code=int(Code.UNDIAGNOSED),
                error_type=type(error).__name__,
            )


def _settled(done: asyncio.Future[None] | concurrent.futures.Future[None]) -> None:
    if not done.cancelled():
        done.exception()
