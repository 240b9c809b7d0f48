"""A server assembled from use-case bundles serves a session without an HTTP request as the
caller it was built for, and an HTTP request only as the caller its credential admits."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult
from mcp_types import ErrorData

from mailfathom.domain.access import ALL_PERMISSIONS, Caller, ConfirmationMode, Permission
from mailfathom.domain.config import CallerEntry, McpEndpointConfig
from mailfathom.domain.mcp_oauth import OAuthSubject
from mailfathom.entrypoints.mcp.assemble import ToolBundles, build_server_from, stdio_caller
from mcp_tests.client import UNKNOWN_TOOL, answer_of, code
from mcp_tests.in_process import MODES, InProcess, in_process, one_reader_config, served_in_thread
from mcp_tests.test_read_tools_http import ALL_TOOLS, READ_TOOLS

KEY = "key-assembled-" + uuid.uuid4().hex


def _config(root: Path) -> str:
    return one_reader_config(root, hashlib.sha256(KEY.encode()).hexdigest())


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcess]:
    root = tmp_path_factory.mktemp("assembled")
    with in_process(root, _config(root)) as opened:
        yield opened


def _listed(url: str, key: str) -> list[str]:
    async def run() -> list[str]:
        headers = {"Authorization": f"Bearer {key}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30)) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            return sorted(t.name for t in (await client.list_tools()).tools)

    return anyio.run(run)


def _answer(url: str, authorization: str | None) -> httpx2.Response:
    headers = {"Accept": "application/json, text/event-stream"}
    if authorization is not None:
        headers["Authorization"] = authorization
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    return httpx2.post(url, json=body, headers=headers)


@pytest.mark.parametrize("mode", MODES)
def test_a_session_in_process_is_served_as_the_caller_built_for(
    deployment: InProcess, mode: str
) -> None:
    bundles = ToolBundles.of(deployment.services)
    config = deployment.services.config.mcp
    everything = build_server_from(bundles, config, Caller(ALL_PERMISSIONS, "everything"))
    flags = build_server_from(bundles, config, Caller(frozenset({Permission.FLAGS_WRITE}), "f"))

    async def listed(server: object) -> list[str]:
        async with Client(server, mode=mode) as client:  # type: ignore[arg-type]
            return sorted(t.name for t in (await client.list_tools()).tools)

    assert anyio.run(listed, everything) == ALL_TOOLS
    assert anyio.run(listed, flags) == ["set_mail_flags"]


def test_over_http_the_built_for_caller_admits_nobody(deployment: InProcess) -> None:
    """A server built to serve every permission in process, served over HTTP: a request
    without a key is refused before MCP, a wrong key too, and the reader's key is served
    the reader's tools and nothing more."""
    everything = Caller(ALL_PERMISSIONS, "everything")
    config = deployment.services.config.mcp
    server = build_server_from(ToolBundles.of(deployment.services), config, everything)
    with served_in_thread(server, config) as url:
        # Told where to get a credential; a key presented is told it does not hold.
        missing = _answer(url, None)
        assert missing.status_code == 401
        assert missing.headers["www-authenticate"].startswith("Bearer resource_metadata=")
        wrong = _answer(url, "Bearer key-nobody-holds")
        assert wrong.status_code == 401
        assert wrong.headers["www-authenticate"].startswith('Bearer error="invalid_token", ')
        assert _listed(url, KEY) == READ_TOOLS


def test_a_call_over_http_is_refused_as_the_admitted_caller(deployment: InProcess) -> None:
    config = deployment.services.config.mcp
    server = build_server_from(
        ToolBundles.of(deployment.services), config, Caller(ALL_PERMISSIONS, "everything")
    )

    async def run(url: str) -> tuple[CallToolResult | ErrorData, CallToolResult]:
        headers = {"Authorization": f"Bearer {KEY}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30)) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            hidden = await answer_of(client, "set_mail_flags", {"storedEmailId": str(uuid.uuid4())})
            read = await client.call_tool("list_accounts", {})
            return hidden, read

    with served_in_thread(server, config) as url:
        hidden, read = anyio.run(run, url)
    assert hidden == UNKNOWN_TOOL
    assert code(read) is None


def test_stdio_serves_the_open_entry_or_else_every_permission_asked_before_sending() -> None:
    keyed = CallerEntry(name="keyed", api_key_sha256="0" * 64, permissions=frozenset())
    reads = frozenset({Permission.MAIL_READ})
    open_entry = CallerEntry(name="local", api_key_sha256=None, permissions=reads)
    assert stdio_caller(McpEndpointConfig(callers=(keyed, open_entry))) == Caller(reads, "local")
    assert stdio_caller(McpEndpointConfig(callers=(keyed,))) == Caller(
        ALL_PERMISSIONS, "stdio", ConfirmationMode.ASK
    )


def test_an_entry_admitting_a_token_subject_is_never_the_open_entry() -> None:
    reads = frozenset({Permission.MAIL_READ})
    token_entry = CallerEntry(
        name="person", api_key_sha256=None, permissions=None, oauth=OAuthSubject("someone")
    )
    open_entry = CallerEntry(name="local", api_key_sha256=None, permissions=reads)
    assert stdio_caller(McpEndpointConfig(callers=(token_entry,))) == Caller(
        ALL_PERMISSIONS, "stdio", ConfirmationMode.ASK
    )
    assert stdio_caller(McpEndpointConfig(callers=(token_entry, open_entry))) == Caller(
        reads, "local"
    )
