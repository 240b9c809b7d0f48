"""The [McpEndpoint] bounds on sessions."""

from __future__ import annotations

from typing import Any

import pytest

from config.test_config_loading import imap_account, parse, problems_of
from mailfathom.domain.config import DEFAULT_SESSION_IDLE_SECONDS, DEFAULT_SESSIONS_PER_CALLER


def with_endpoint(**endpoint: Any) -> dict[str, Any]:
    return {"Accounts": [imap_account()], "McpEndpoint": endpoint}


def test_defaults_bound_sessions() -> None:
    config = parse(with_endpoint())
    assert config.mcp.sessions_per_caller == DEFAULT_SESSIONS_PER_CALLER
    assert config.mcp.session_idle_seconds == DEFAULT_SESSION_IDLE_SECONDS
    assert 1 <= DEFAULT_SESSIONS_PER_CALLER <= 100
    assert 60 <= DEFAULT_SESSION_IDLE_SECONDS <= 900


def test_bounds_are_read() -> None:
    config = parse(with_endpoint(SessionsPerCaller=4, SessionIdleSeconds=90.5))
    assert config.mcp.sessions_per_caller == 4
    assert config.mcp.session_idle_seconds == 90.5


@pytest.mark.parametrize(
    ("endpoint", "key"),
    [
        ({"SessionsPerCaller": 0}, "McpEndpoint.SessionsPerCaller"),
        ({"SessionsPerCaller": 1001}, "McpEndpoint.SessionsPerCaller"),
        ({"SessionsPerCaller": "8"}, "McpEndpoint.SessionsPerCaller"),
        ({"SessionIdleSeconds": 0.5}, "McpEndpoint.SessionIdleSeconds"),
        ({"SessionIdleSeconds": 86401}, "McpEndpoint.SessionIdleSeconds"),
    ],
)
def test_out_of_range_bounds_name_the_key(endpoint: dict[str, Any], key: str) -> None:
    problems = problems_of(with_endpoint(**endpoint))
    assert any(p.startswith(key + ":") for p in problems), problems
