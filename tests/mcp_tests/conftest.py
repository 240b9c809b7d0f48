"""Fixtures of the MCP surface tests."""

from __future__ import annotations

from mcp_tests.deployment import mcp_deployment as mcp_deployment
