"""Fixtures of the file tests: the MCP deployment over HTTP."""

from __future__ import annotations

from mcp_tests.deployment import mcp_deployment as mcp_deployment
