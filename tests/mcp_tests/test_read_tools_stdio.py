"""The same server over stdio, as a desktop client starts it."""

from __future__ import annotations

from typing import Any

from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import ErrorData

from mcp_tests.client import UNKNOWN_TOOL, answer_of, code, over_stdio, structured
from mcp_tests.deployment import Deployment


def test_stdio_serves_the_read_tools(mcp_deployment: Deployment) -> None:
    async def work(client: Client) -> tuple[list[str], dict[str, Any], int | None]:
        listed = await client.list_tools()
        accounts = await client.call_tool("list_accounts", {})
        refused = await client.call_tool("list_emails", {"pageSize": 0})
        return sorted(t.name for t in listed.tools), structured(accounts), code(refused)

    names, accounts, refused = over_stdio(
        mcp_deployment.config_path,
        mcp_deployment.env,
        work,
        mcp_deployment.data_dir.parent / "stdio.log",
    )
    assert names == [
        "cancel_outgoing_email",
        "create_contact",
        "delete_contact",
        "delete_draft",
        "forward_email",
        "get_contact",
        "get_email_content",
        "get_outgoing_email",
        "list_accounts",
        "list_contacts",
        "list_emails",
        "organize_email",
        "promote_contact",
        "reply_to_email",
        "save_draft",
        "search_emails",
        "send_draft",
        "send_email",
        "set_mail_flags",
        "update_contact",
        "update_draft",
    ]
    assert [a["accountId"] for a in accounts["accounts"]] == ["work"]
    assert refused == 51001


def test_stdio_reads_a_conversation(mcp_deployment: Deployment) -> None:
    async def work(client: Client) -> dict[str, Any]:
        found = structured(await client.call_tool("search_emails", {"queryText": "quarterly"}))
        thread_id = found["matches"][0]["summary"]["threadId"]
        return structured(await client.call_tool("get_email_content", {"threadId": thread_id}))

    result = over_stdio(
        mcp_deployment.config_path,
        mcp_deployment.env,
        work,
        mcp_deployment.data_dir.parent / "stdio.log",
    )
    subjects = [e["content"]["headers"]["subject"] for e in result["emails"]]
    assert subjects == ["Quarterly report draft", "Re: Quarterly report draft"]


def test_stdio_answers_what_it_cannot_serve_with_json_rpc_errors(
    mcp_deployment: Deployment,
) -> None:
    async def work(client: Client) -> list[object]:
        try:
            await client.list_tools(cursor="garbage")
            listed: object = "listed"
        except MCPError as error:
            listed = error.error
        return [
            await answer_of(client, "list_accountz", {}),
            await answer_of(client, "list_emails\n{}", {}),
            listed,
        ]

    answers = over_stdio(
        mcp_deployment.config_path,
        mcp_deployment.env,
        work,
        mcp_deployment.data_dir.parent / "stdio.log",
    )
    assert answers == [UNKNOWN_TOOL, UNKNOWN_TOOL, ErrorData(code=-32602, message="Invalid cursor")]
