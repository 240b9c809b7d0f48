"""The official MCP client, driven synchronously from tests."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import anyio
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.session import ElicitationFnT
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult
from mcp_types import ErrorData

from mailfathom.entrypoints.mcp.untrusted import CONTENT_TRUST_NOTICE
from mcp_tests.result_text import expand_text

T = TypeVar("T")

# What a call naming a tool the caller is not served is answered with, whether the tool
# exists or not: a JSON-RPC error, not a tool result.
UNKNOWN_TOOL = ErrorData(code=-32602, message="Unknown tool")
Answer = CallToolResult | ErrorData


def over_http(
    url: str,
    key: str | None,
    work: Callable[[Client], Awaitable[T]],
    *,
    headers: Mapping[str, str] | None = None,
    mode: str = "auto",
    elicitation_callback: ElicitationFnT | None = None,
) -> T:
    """`elicitation_callback` answers what the server asks a person (none: the client
    declares no elicitation)."""

    async def run() -> T:
        sent = dict(headers or {})
        if key is not None:
            sent["Authorization"] = f"Bearer {key}"
        async with (
            httpx2.AsyncClient(headers=sent, timeout=httpx2.Timeout(30, read=60)) as http,
            Client(
                streamable_http_client(url, http_client=http),
                mode=mode,
                elicitation_callback=elicitation_callback,
            ) as client,
        ):
            return await work(client)

    return anyio.run(run)


def over_stdio(
    config: Path, env: Mapping[str, str], work: Callable[[Client], Awaitable[T]], errlog: Path
) -> T:
    async def run() -> T:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "mailfathom", "serve", "--stdio", "--config", str(config)],
            env=dict(env),
        )
        with errlog.open("a") as log:
            async with Client(stdio_client(params, errlog=log)) as client:
                return await work(client)

    return anyio.run(run)


def call(
    url: str, key: str | None, tool: str, arguments: dict[str, Any] | None = None, **options: Any
) -> CallToolResult:
    async def work(client: Client) -> CallToolResult:
        return await client.call_tool(tool, arguments or {})

    return over_http(url, key, work, **options)


async def answer_of(client: Client, tool: str, arguments: dict[str, Any]) -> Answer:
    """What a call is answered with: its result, or the JSON-RPC error answering it instead."""
    try:
        return await client.call_tool(tool, arguments)
    except MCPError as error:
        return error.error


def refusal(
    url: str, key: str | None, tool: str, arguments: dict[str, Any] | None = None, **options: Any
) -> Answer:
    """The JSON-RPC error a call over HTTP is answered with (its result where it has one)."""

    async def work(client: Client) -> Answer:
        return await answer_of(client, tool, arguments or {})

    return over_http(url, key, work, **options)


def tool_names(url: str, key: str | None, **options: Any) -> list[str]:
    async def work(client: Client) -> list[str]:
        listed = await client.list_tools()
        return [t.name for t in listed.tools]

    return over_http(url, key, work, **options)


def text(result: CallToolResult) -> str:
    return "".join(getattr(b, "text", "") for b in result.content)


def code(result: CallToolResult) -> int | None:
    """The five-digit code of a failed call, or None for a success."""
    if not result.is_error:
        return None
    body = text(result)
    assert body.startswith("MailFathom error "), body
    return int(body[len("MailFathom error ") :][:5])


def structured(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, text(result)
    assert isinstance(result.structured_content, dict)
    assert expand_text(text(result), result.structured_content) == result.structured_content
    trust = result.structured_content.get("contentTrust")
    assert trust is None or trust["notice"] == CONTENT_TRUST_NOTICE
    return result.structured_content


def without_notice(found: dict[str, Any]) -> dict[str, Any]:
    """A result with its contentTrust notice (checked by `structured`) left out, for a test
    that compares the rest of it whole."""
    return {name: value for name, value in found.items() if name != "contentTrust"}


def every_email(
    list_page: Callable[[dict[str, Any]], CallToolResult], **filters: Any
) -> list[dict[str, Any]]:
    """Every email list_emails walks to under `filters`, seven to a page, following each
    page's cursor; `list_page` makes the call with the arguments it is given."""
    found: list[dict[str, Any]] = []
    arguments: dict[str, Any] = {**filters, "pageSize": 7}
    while True:
        page = structured(list_page(arguments))
        found.extend(page["emails"])
        if not page.get("nextCursor"):
            return found
        arguments = {**filters, "pageSize": 7, "cursor": page["nextCursor"]}
