"""The [McpEndpoint] bounds on sessions and tool threads, and the key of `/metrics`."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from config.test_config_loading import imap_account, parse, problems_of
from mailfathom.domain.config import (
    DEFAULT_SESSION_IDLE_SECONDS,
    DEFAULT_SESSIONS_PER_CALLER,
    DEFAULT_TOOL_THREADS,
)

DIGEST = hashlib.sha256(b"a-scraper-key").hexdigest()


def with_endpoint(**endpoint: Any) -> dict[str, Any]:
    return {"Accounts": [imap_account()], "McpEndpoint": endpoint}


def test_defaults_bound_sessions_and_serve_no_metrics() -> None:
    config = parse(with_endpoint())
    assert config.mcp.sessions_per_caller == DEFAULT_SESSIONS_PER_CALLER
    assert config.mcp.session_idle_seconds == DEFAULT_SESSION_IDLE_SECONDS
    assert 1 <= DEFAULT_SESSIONS_PER_CALLER <= 100
    assert 60 <= DEFAULT_SESSION_IDLE_SECONDS <= 900
    assert config.mcp.metrics_api_key_sha256 is None
    assert config.mcp.tool_threads == DEFAULT_TOOL_THREADS


def test_tool_threads_are_read() -> None:
    assert parse(with_endpoint(ToolThreads=1)).mcp.tool_threads == 1
    assert parse(with_endpoint(ToolThreads=64)).mcp.tool_threads == 64


def test_bounds_and_metrics_key_are_read() -> None:
    config = parse(
        with_endpoint(SessionsPerCaller=4, SessionIdleSeconds=90.5, MetricsApiKeySha256=DIGEST)
    )
    assert config.mcp.sessions_per_caller == 4
    assert config.mcp.session_idle_seconds == 90.5
    assert config.mcp.metrics_api_key_sha256 == DIGEST


@pytest.mark.parametrize(
    ("endpoint", "key"),
    [
        ({"SessionsPerCaller": 0}, "McpEndpoint.SessionsPerCaller"),
        ({"SessionsPerCaller": 1001}, "McpEndpoint.SessionsPerCaller"),
        ({"SessionsPerCaller": "8"}, "McpEndpoint.SessionsPerCaller"),
        ({"SessionIdleSeconds": 0.5}, "McpEndpoint.SessionIdleSeconds"),
        ({"SessionIdleSeconds": 86401}, "McpEndpoint.SessionIdleSeconds"),
        ({"MetricsApiKeySha256": "ABC"}, "McpEndpoint.MetricsApiKeySha256"),
        ({"MetricsApiKey": "plain"}, "McpEndpoint.MetricsApiKey"),
        ({"ToolThreads": 0}, "McpEndpoint.ToolThreads"),
        ({"ToolThreads": 65}, "McpEndpoint.ToolThreads"),
        ({"ToolThreads": 2.5}, "McpEndpoint.ToolThreads"),
    ],
)
def test_out_of_range_bounds_name_the_key(endpoint: dict[str, Any], key: str) -> None:
    problems = problems_of(with_endpoint(**endpoint))
    assert any(p.startswith(key + ":") for p in problems), problems
    assert not any("plain" in p for p in problems)
