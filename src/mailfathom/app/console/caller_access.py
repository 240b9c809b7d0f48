"""The console's callers and recent-calls pages over one store, and what the MCP endpoint
reads (console keys) and writes (answered calls) through the same use cases."""

from __future__ import annotations

from dataclasses import dataclass

from mailfathom.app.console.caller_keys import CallerKeys
from mailfathom.app.console.tool_calls import ToolCalls


@dataclass(frozen=True, slots=True)
class CallerAccess:
    keys: CallerKeys
    calls: ToolCalls
