"""A tool name reaches the log only when this endpoint publishes a tool of that name."""

from __future__ import annotations

import uuid

import log_audit
from mcp_tests.client import UNKNOWN_TOOL, refusal
from mcp_tests.deployment import KEYS, Deployment
from waiting import wait_for


def test_a_caller_chosen_name_spelled_like_a_tool_is_not_logged(
    mcp_deployment: Deployment,
) -> None:
    # Lower-case letters and underscores only: spelled exactly like one of our tool names.
    chosen = "leak_" + "".join(chr(ord("a") + int(c, 16)) for c in uuid.uuid4().hex[:24])
    log_audit.register(chosen)
    before = mcp_deployment.server_log.read_text("utf-8", "replace").count('"unknownTool"')
    assert refusal(mcp_deployment.url, KEYS["full"], chosen) == UNKNOWN_TOOL

    def logged() -> str | None:
        log = mcp_deployment.server_log.read_text("utf-8", "replace")
        return log if log.count('"unknownTool"') > before else None

    log = wait_for(logged, "the call was not logged", timeout=20)
    assert chosen not in log
