"""Fixtures of the download tests: the MCP deployment over HTTP, without download links."""

from __future__ import annotations

from mcp_tests.deployment import mcp_deployment as mcp_deployment
