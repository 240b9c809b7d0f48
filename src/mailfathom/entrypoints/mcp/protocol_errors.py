"""The JSON-RPC errors the MCP server words itself: each in fixed words, none repeating the
request."""

from __future__ import annotations

from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS


class Refusal(MCPError):
    """An error this server words itself, in fixed words: answered as it stands."""


def unknown_tool() -> Refusal:
    """A call naming a tool this caller is not served, whether or not it exists. A protocol
    error, as MCP has it, and never the name: it is the caller's text, of any length."""
    return Refusal(INVALID_PARAMS, "Unknown tool")
