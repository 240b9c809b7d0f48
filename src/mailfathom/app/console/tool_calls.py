"""Recent tool calls: each answered call of the MCP endpoint kept as the owner reads it
(tool, caller entry, outcome, code, duration, when), never an argument or a result.

The log is bounded: it keeps the newest `KEPT` calls, trimmed once it has grown by a tenth
of that (see `ToolCallLog.append`). Writing is the endpoint's, after the call was answered;
a failure to write is the endpoint's to swallow, never the call's."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from mailfathom.app.console.access_ports import ToolCallLog, ToolCallRecord

KEPT = 10_000
PAGE_SIZE = 50
OUTCOMES = ("success", "refused", "failed", "unknownTool", "protocolError", "cancelled")


@dataclass(frozen=True, slots=True)
class CallsPage:
    calls: tuple[ToolCallRecord, ...]
    # Where the next (older) page starts, or None when this is the last.
    older: int | None
    callers: tuple[str, ...]


class ToolCalls:
    def __init__(
        self,
        log: ToolCallLog,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        keep: int = KEPT,
    ) -> None:
        self._log = log
        self._clock = clock
        self._keep = keep

    def record(
        self, tool: str, caller: str | None, outcome: str, code: int | None, seconds: float
    ) -> None:
        """Keep one answered call (see `made`)."""
        self.keep([self.made(tool, caller, outcome, code, seconds)])

    def made(
        self, tool: str, caller: str | None, outcome: str, code: int | None, seconds: float
    ) -> ToolCallRecord:
        """The record of a call answered now, which took `seconds`. `tool` is the name as
        the endpoint's telemetry counts it (a name it does not publish is already its
        placeholder)."""
        now = self._clock()
        return ToolCallRecord(
            at=now - timedelta(seconds=seconds),
            tool=tool,
            caller=caller,
            outcome=outcome,
            code=code,
            duration_us=max(0, round(seconds * 1_000_000)),
        )

    def keep(self, calls: Sequence[ToolCallRecord]) -> None:
        """Keep answered calls in one write, in the order given; of more than the log
        keeps, only the newest are written."""
        self._log.append(calls[-self._keep :], self._keep)

    def page(
        self,
        before: int | None = None,
        caller: str | None = None,
        outcome: str | None = None,
        size: int = PAGE_SIZE,
    ) -> CallsPage:
        """The newest calls (before the call `before`), optionally of one caller and one
        outcome; an outcome the endpoint never records filters nothing."""
        if outcome not in OUTCOMES:
            outcome = None
        found = self._log.newest(size + 1, before, caller or None, outcome)
        shown = tuple(found[:size])
        older = shown[-1].call_id if len(found) > size and shown else None
        return CallsPage(shown, older, tuple(self._log.callers()))
