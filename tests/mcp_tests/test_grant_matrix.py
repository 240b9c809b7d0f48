"""Every grant set against every tool, over Streamable HTTP with the official client.

A tool is offered exactly when the caller's grant covers every permission its use case
declares; an offered tool is never refused for want of a permission, and a tool that is not
offered answers exactly as a tool that does not exist."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from mcp import Client
from mcp.types import CallToolResult

from mailfathom.domain.codes import Code
from mcp_tests.client import code, over_http
from mcp_tests.deployment import KEYS, Deployment

ZERO = "00000000-0000-0000-0000-000000000000"
READ = "read"
SEND = "send"
DRAFT = "drafts"

# What each tool's use case needs, as the tool contract states it.
REQUIRED: dict[str, frozenset[str]] = {
    "list_accounts": frozenset({READ}),
    "list_emails": frozenset({READ}),
    "get_email_content": frozenset({READ}),
    "search_emails": frozenset({READ}),
    "send_email": frozenset({SEND}),
    "reply_to_email": frozenset({SEND, READ}),
    "forward_email": frozenset({SEND, READ}),
    "get_outgoing_email": frozenset({SEND}),
    "cancel_outgoing_email": frozenset({SEND}),
    "save_draft": frozenset({DRAFT}),
    "update_draft": frozenset({DRAFT}),
    "delete_draft": frozenset({DRAFT}),
    "send_draft": frozenset({SEND}),
}

GRANTS: dict[str, frozenset[str]] = {
    "nothing": frozenset(),
    "reader": frozenset({READ}),
    "sender": frozenset({SEND}),
    "reader-sender": frozenset({READ, SEND}),
    "drafter": frozenset({DRAFT}),
    "drafter-sender": frozenset({DRAFT, SEND}),
    "full": frozenset({READ, SEND, DRAFT}),
}


def _arguments(tool: str) -> dict[str, Any]:
    key = "grant-matrix-" + uuid.uuid4().hex
    arguments: dict[str, dict[str, Any]] = {
        "list_accounts": {},
        "list_emails": {"pageSize": 1},
        "get_email_content": {"storedEmailIds": [ZERO]},
        "search_emails": {"queryText": "quarterly"},
        "send_email": {
            "account": "work",
            "to": ["nobody@example.com"],
            "subject": "Grant matrix",
            "plainTextBody": "Grant matrix.",
            "idempotencyKey": key,
        },
        "reply_to_email": {
            "storedEmailId": ZERO,
            "audience": "senderOnly",
            "plainTextBody": "Grant matrix.",
            "idempotencyKey": key,
        },
        "forward_email": {
            "storedEmailId": ZERO,
            "to": ["nobody@example.com"],
            "plainTextBody": "Grant matrix.",
            "idempotencyKey": key,
        },
        "get_outgoing_email": {"outgoingEmailId": ZERO},
        "cancel_outgoing_email": {"outgoingEmailId": ZERO},
        "save_draft": {"account": "work", "subject": "Grant matrix", "plainTextBody": key},
        "update_draft": {
            "draftId": ZERO,
            "account": "work",
            "subject": "Grant matrix",
            "plainTextBody": "Grant matrix.",
        },
        "delete_draft": {"draftId": ZERO},
        "send_draft": {"draftId": ZERO},
    }
    return arguments[tool]


def _shape(result: CallToolResult, name: str) -> str:
    return result.model_dump_json().replace(name, "NAME")


@pytest.mark.parametrize("grant", sorted(GRANTS))
def test_listing_offers_exactly_the_tools_the_grant_covers(
    mcp_deployment: Deployment, grant: str
) -> None:
    async def listed(client: Client) -> list[str]:
        return [t.name for t in (await client.list_tools()).tools]

    expected = sorted(t for t, needs in REQUIRED.items() if needs <= GRANTS[grant])
    assert sorted(over_http(mcp_deployment.url, KEYS[grant], listed)) == expected


@pytest.mark.parametrize("grant", sorted(GRANTS))
def test_offered_tools_answer_and_hidden_ones_are_unknown(
    mcp_deployment: Deployment, grant: str
) -> None:
    async def work(client: Client) -> dict[str, tuple[bool, CallToolResult, CallToolResult]]:
        offered = {t.name for t in (await client.list_tools()).tools}
        answers = {}
        for tool in REQUIRED:
            result = await client.call_tool(tool, _arguments(tool))
            unknown = await client.call_tool(tool + "_absent", _arguments(tool))
            answers[tool] = (tool in offered, result, unknown)
        return answers

    answers = over_http(mcp_deployment.url, KEYS[grant], work)
    for tool, (offered, result, unknown) in answers.items():
        if offered:
            assert code(result) != Code.UNDIAGNOSED, tool
        else:
            assert result.is_error, tool
            assert _shape(result, tool) == _shape(unknown, tool + "_absent"), tool


@pytest.mark.parametrize("grant", sorted(GRANTS))
def test_arguments_are_held_to_the_schema_only_on_offered_tools(
    mcp_deployment: Deployment, grant: str
) -> None:
    """An argument the schema does not name is refused with 51017 by an offered tool; a tool
    that is not offered answers it exactly as a tool that does not exist, so no schema answer
    tells a caller that a tool it may not use is there."""

    async def work(client: Client) -> dict[str, tuple[bool, CallToolResult, CallToolResult]]:
        offered = {t.name for t in (await client.list_tools()).tools}
        answers = {}
        for tool in REQUIRED:
            arguments = {**_arguments(tool), "unpublished": 1}
            result = await client.call_tool(tool, arguments)
            unknown = await client.call_tool(tool + "_absent", arguments)
            answers[tool] = (tool in offered, result, unknown)
        return answers

    answers = over_http(mcp_deployment.url, KEYS[grant], work)
    for tool, (offered, result, unknown) in answers.items():
        if offered:
            assert code(result) == Code.ARGUMENTS_NOT_MATCHING_SCHEMA, tool
        else:
            assert _shape(result, tool) == _shape(unknown, tool + "_absent"), tool
