"""Fixtures of the MCP surface tests."""

from __future__ import annotations

from mcp_tests.deployment import mcp_deployment as mcp_deployment
from mcp_tests.hardened import bounded_server as bounded_server
from mcp_tests.hardened import short_idle_server as short_idle_server
