"""What the endpoint answers a request it cannot serve as asked, over HTTP in both protocol
generations: a JSON-RPC error with a fixed message, never anything the request carried, never a
library's report. A tool this caller is not served is a tool that does not exist."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

from mailfathom.domain.access import ALL_PERMISSIONS, Caller
from mailfathom.entrypoints.mcp.assemble import ToolBundles, build_server_from
from mcp_tests.client import UNKNOWN_TOOL, Answer, answer_of
from mcp_tests.in_process import LEGACY, MODERN, in_process, one_reader_config, served_in_thread
from mcp_tests.raw_rpc import Endpoint, request

KEY = "protocol-errors-key"
MARK = "divorce-lawyer-" + "q" * 8


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The endpoint, serving one caller (`reader`, who may only read mail) by `KEY`."""
    root = tmp_path_factory.mktemp("protocol-errors")
    digest = hashlib.sha256(KEY.encode()).hexdigest()
    with in_process(root, one_reader_config(root, digest)) as deployment:
        config = deployment.services.config.mcp
        server = build_server_from(
            ToolBundles.of(deployment.services), config, Caller(ALL_PERMISSIONS, "everything")
        )
        with served_in_thread(server, config) as served:
            yield served


@pytest.fixture
def http() -> Iterator[httpx2.Client]:
    with httpx2.Client(timeout=httpx2.Timeout(30)) as client:
        yield client


def _answers(url: str, mode: str, names: list[str]) -> list[Answer]:
    """What the official client is answered for a call of each of `names`, no arguments."""

    async def run() -> list[Answer]:
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {KEY}"}) as http,
            Client(streamable_http_client(url, http_client=http), mode=mode) as client,
        ):
            return [await answer_of(client, name, {}) for name in names]

    return anyio.run(run)


@pytest.mark.parametrize("mode", [MODERN, LEGACY])
def test_an_unknown_and_a_hidden_tool_are_one_json_rpc_error(url: str, mode: str) -> None:
    # send_email exists and is not served to a reader; the others exist nowhere.
    names = ["send_email", "list_accountz", 'list_emails\n{"event":"forged"}', MARK]
    assert _answers(url, mode, names) == [UNKNOWN_TOOL] * len(names)
    (served,) = _answers(url, mode, ["list_accounts"])
    assert isinstance(served, CallToolResult)
    assert not served.is_error


@pytest.mark.parametrize("generation", ["handshake", "modern"])
def test_a_call_naming_no_tool_repeats_nothing_of_the_name(
    url: str, http: httpx2.Client, generation: str
) -> None:
    with Endpoint.reached(http, url, KEY, generation) as endpoint:
        # The modern generation repeats the name in a header, which holds less.
        name = MARK * (200 if generation == "modern" else 10_000)
        response = endpoint.post(http, request("tools/call", {"name": name, "arguments": {}}))
        assert MARK not in response.text
        called = endpoint.ask(http, request("tools/call", {"name": name, "arguments": {}}))
        assert called == {
            "jsonrpc": "2.0",
            "id": 7,
            "error": UNKNOWN_TOOL.model_dump(exclude_none=True),
        }
