"""What the server published and logged about calls each test makes itself, so each passes
alone and in any order beside the other MCP tests."""

from __future__ import annotations

import httpx2

from mcp_tests.client import UNKNOWN_TOOL, call, refusal, structured, text
from mcp_tests.deployment import KEYS, SENSITIVE, Deployment
from waiting import wait_for


def test_metrics_count_calls_by_published_tool_only(mcp_deployment: Deployment) -> None:
    call(mcp_deployment.url, KEYS["full"], "list_emails", {"pageSize": 0})
    assert refusal(mcp_deployment.url, KEYS["full"], "not_a_tool_x") == UNKNOWN_TOOL
    call(mcp_deployment.url, KEYS["full"], "list_accounts", {})
    scraper = {"Authorization": f"Bearer {KEYS['metrics']}"}
    metrics = httpx2.get(mcp_deployment.metrics_url, headers=scraper).text
    assert 'mailfathom_mcp_tool_calls_total{code="51001",outcome="refused",tool="list_emails"}' in (
        metrics
    )
    assert 'outcome="success",tool="list_accounts"' in metrics
    assert 'outcome="unknownTool",tool="unrecognized"' in metrics
    assert "not_a_tool_x" not in metrics
    assert "mailfathom_mcp_tool_call_duration_seconds_bucket" in metrics


def test_server_log_records_calls_and_carries_no_mail_content(
    mcp_deployment: Deployment,
) -> None:
    before = mcp_deployment.server_log.read_text("utf-8", "replace").count('"tool.call"')
    # Calls that read the mail itself: the answers carry what the log must not.
    listed = structured(call(mcp_deployment.url, KEYS["full"], "list_emails", {"pageSize": 50}))
    quarterly = [e for e in listed["emails"] if e["subject"] == "Quarterly report draft"]
    assert quarterly, "the fixture's mail was not listed"
    read = call(
        mcp_deployment.url,
        KEYS["full"],
        "get_email_content",
        {"storedEmailIds": [quarterly[0]["storedEmailId"]]},
    )
    assert "Revenue grew strongly" in text(read)
    found = call(mcp_deployment.url, KEYS["full"], "search_emails", {"queryText": "quarterly"})
    assert "alice@example.org" in text(found)
    call(mcp_deployment.url, KEYS["full"], "search_emails", {"queryText": "revenue strongly"})
    call(mcp_deployment.url, KEYS["full"], "list_emails", {"senderAddress": "alice@example.org"})
    call(mcp_deployment.url, KEYS["full"], "list_emails", {"pageSize": "Quarterly report draft"})
    # A caller-chosen name never reaches the log; only published tool names do.
    assert refusal(mcp_deployment.url, KEYS["full"], "Ask Alice Anything") == UNKNOWN_TOOL

    def logged() -> str | None:
        log = mcp_deployment.server_log.read_text("utf-8", "replace")
        return log if log.count('"tool.call"') >= before + 7 else None

    log = wait_for(logged, "the calls were not logged", timeout=20)
    assert '"event": "tool.call"' in log
    assert '"tool": "unrecognized"' in log
    for fragment in [*SENSITIVE, "revenue strongly", "Ask Alice", *KEYS.values()]:
        assert fragment.lower() not in log.lower(), fragment
