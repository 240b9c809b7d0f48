"""One measurement per tool call, published as a log line and as two instruments; and a count
of owner alerts raised.

The tool name is a dimension, and is logged, only when this endpoint publishes a tool of that
name; anything else a caller wrote becomes a fixed placeholder (a name merely spelled like
one of ours is still the caller's text), so a caller can neither write into the log nor
create a time series. The same dimension is what a call is kept as for the console's
recent-calls page, where a journal is given.

An owner alert (a draft kept because nobody could be asked whether to send it) is counted by
its reason, one of this project's own words, so an operator's alerting sees a draft waiting
without polling `mfctl alerts list`.
"""

from __future__ import annotations

from typing import Protocol

import structlog
from prometheus_client import CollectorRegistry, Counter, Histogram

from mailfathom.app.confirmation.confirmed_sending import SENSITIVE_REASON, UNAVAILABLE_REASON
from mailfathom.app.confirmation.ports import OwnerAlert

log = structlog.get_logger("mailfathom.mcp")

UNRECOGNIZED = "unrecognized"


class Journal(Protocol):
    """Where each measured call is also kept (tool dimension, caller, outcome, code, seconds)."""

    def __call__(
        self, tool: str, caller: str | None, outcome: str, code: int | None, seconds: float
    ) -> None: ...

    def settle(self) -> None:
        """Keep at once what waits to be kept (the process is stopping)."""
        ...


class ToolTelemetry:
    def __init__(self, published: frozenset[str], journal: Journal | None = None) -> None:
        self.published = published
        self.journal = journal
        self.registry = CollectorRegistry()
        self.calls = Counter(
            "mailfathom_mcp_tool_calls",
            "MCP tool calls by tool, outcome and code.",
            ["tool", "outcome", "code"],
            registry=self.registry,
        )
        self.duration = Histogram(
            "mailfathom_mcp_tool_call_duration_seconds",
            "Duration of MCP tool calls by tool and outcome.",
            ["tool", "outcome"],
            registry=self.registry,
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0),
        )
        self.owner_alerts = Counter(
            "mailfathom_owner_alerts_raised",
            "Owner alerts raised by this process (drafts kept because nobody could be asked "
            "whether to send them), by reason.",
            ["reason"],
            registry=self.registry,
        )
        # Published at 0 from the start, so an alerting rule has a series to watch.
        self.owner_alerts.labels(UNAVAILABLE_REASON)
        self.owner_alerts.labels(SENSITIVE_REASON)

    def settle(self) -> None:
        """Keep the calls the journal still holds (the process is stopping)."""
        if self.journal is not None:
            self.journal.settle()

    def owner_alert_raised(self, alert: OwnerAlert) -> None:
        self.owner_alerts.labels(alert.reason).inc()

    def record(
        self, name: str, outcome: str, code: int | None, seconds: float, caller: str | None
    ) -> None:
        dimension = name if name in self.published else UNRECOGNIZED
        code_text = str(code) if code is not None else ""
        self.calls.labels(dimension, outcome, code_text).inc()
        self.duration.labels(dimension, outcome).observe(seconds)
        log.info(
            "tool.call",
            tool=dimension,
            outcome=outcome,
            code=code,
            duration_ms=round(seconds * 1000, 3),
            caller=caller,
        )
        if self.journal is not None:
            self.journal(dimension, caller, outcome, code, seconds)
