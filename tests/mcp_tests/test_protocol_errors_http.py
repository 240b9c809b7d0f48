"""What the endpoint answers a request it cannot serve as asked, over HTTP in both protocol
generations: a JSON-RPC error with a fixed message, never anything the request carried, never a
library's report. JSON-RPC 2.0 decides the code: -32700 for a body that is not JSON, -32600 for
one that is not a single request, notification or response (a request's id is a string or an
integer), -32601 for a method this server has none of, -32602 for parameters the method cannot
take (a cursor included: no listing is ever cut short); a tool this caller is not served is a
tool that does not exist."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterator
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult
from mcp_types import ErrorData

from mailfathom.domain.access import ALL_PERMISSIONS, Caller
from mailfathom.entrypoints.mcp.assemble import ToolBundles, build_server_from
from mcp_tests.client import UNKNOWN_TOOL, Answer, answer_of
from mcp_tests.hardened import close_session
from mcp_tests.in_process import LEGACY, MODERN, in_process, one_reader_config, served_in_thread
from mcp_tests.raw_rpc import GENERATIONS, Endpoint, answer, request

KEY = "protocol-errors-key"
MARK = "divorce-lawyer-" + "q" * 8
INVALID_REQUEST = {
    "jsonrpc": "2.0",
    "id": None,
    "error": {"code": -32600, "message": "Invalid Request"},
}
PARSE_ERROR = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}


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


MALFORMED: list[Any] = [
    {
        "id": 1,
        "method": "tools/call",
        "params": {"name": "search_emails", "arguments": {"q": MARK}},
    },
    {"jsonrpc": "1.0", "id": 1, "method": "ping", "params": {"q": MARK}},
    [{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"q": MARK}}],
    [],
    {"jsonrpc": "2.0", "id": 1, "method": 5, "params": {"q": MARK}},
    {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": MARK},
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": [MARK]},
    {"jsonrpc": "2.0", "method": ["ping"], "params": {"q": MARK}},
    {"jsonrpc": "2.0", "id": 6, "error": {"code": MARK, "message": 5}},
    {"jsonrpc": "2.0", "id": 6.5, "result": {"q": MARK}},
    MARK,
    5,
    None,
]


NOT_JSON = [b'{"jsonrpc": "2.0", "id": 1, "method": "ping"', b"\xff\xfe" + MARK.encode(), b""]
REFUSED_UNREAD = [(body, INVALID_REQUEST) for body in MALFORMED] + [
    (body, PARSE_ERROR) for body in NOT_JSON
]


@pytest.mark.parametrize("generation", GENERATIONS)
@pytest.mark.parametrize(("body", "expected"), REFUSED_UNREAD, ids=range(len(REFUSED_UNREAD)))
def test_a_body_that_is_no_json_rpc_message_is_refused_unread(
    url: str, http: httpx2.Client, generation: str, body: Any, expected: dict[str, Any]
) -> None:
    """-32600 for JSON that is no single message, -32700 for a body that is not JSON."""
    with Endpoint.reached(http, url, KEY, generation) as endpoint:
        response = endpoint.post(http, body)
        assert (response.status_code, response.json()) == (400, expected)


@pytest.mark.parametrize("generation", GENERATIONS)
@pytest.mark.parametrize("ident", [None, 1.5, 2.0, True, False, {"a": MARK}, [1]])
def test_a_request_whose_id_is_no_string_and_no_integer_is_an_invalid_request(
    url: str, http: httpx2.Client, generation: str, ident: Any
) -> None:
    with Endpoint.reached(http, url, KEY, generation) as endpoint:
        for body in (request("ping", id=ident), request("tools/list", {}, id=ident)):
            response = endpoint.post(http, body)
            assert (response.status_code, response.json()) == (400, INVALID_REQUEST)


@pytest.mark.parametrize("generation", ["handshake", "modern"])
def test_well_formed_messages_and_odd_but_valid_ids_still_pass(
    url: str, http: httpx2.Client, generation: str
) -> None:
    with Endpoint.reached(http, url, KEY, generation) as endpoint:
        for ident in ("", MARK, 0, -3, 2**70):
            listed = endpoint.ask(http, request("tools/list", {}, id=ident))
            assert listed["id"] == ident
            assert [t["name"] for t in listed["result"]["tools"]] == [
                "list_accounts",
                "list_emails",
                "get_email_content",
                "search_emails",
            ]
        notification = {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": 9},
        }
        assert endpoint.post(http, notification).status_code == 202


@pytest.mark.parametrize("generation", ["handshake", "modern"])
@pytest.mark.parametrize(
    "method", ["tools/list", "resources/list", "resources/templates/list", "prompts/list"]
)
def test_a_listing_given_a_cursor_this_server_never_issued_is_invalid_params(
    url: str, http: httpx2.Client, generation: str, method: str
) -> None:
    with Endpoint.reached(http, url, KEY, generation) as endpoint:
        for cursor in ("garbage", "", MARK * 100):
            answered = endpoint.ask(http, request(method, {"cursor": cursor}))
            assert answered["error"] == {"code": -32602, "message": "Invalid cursor"}
        listed = endpoint.ask(http, request(method, {}))
        assert "error" not in listed
        assert "nextCursor" not in listed["result"]


def test_the_official_client_is_told_a_cursor_is_invalid(url: str) -> None:
    async def run() -> ErrorData:
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {KEY}"}) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            with pytest.raises(MCPError) as refused:
                await client.list_tools(cursor="garbage")
            return refused.value.error

    assert anyio.run(run) == ErrorData(code=-32602, message="Invalid cursor")


# Requests refused, or failed on, inside the server: each answer is its code's fixed message,
# with nothing of the request beside it, and nothing of it reaches the log either.
METHOD_NOT_FOUND = {"code": -32601, "message": "Method not found"}
INVALID_PARAMS = {"code": -32602, "message": "Invalid params"}
REFUSED_INSIDE: list[tuple[dict[str, Any], dict[str, Any], dict[str, Any]]] = [
    # (request, answer in the handshake generation, answer in the modern one)
    (request(MARK + "/method", {}), METHOD_NOT_FOUND, METHOD_NOT_FOUND),
    (
        request(
            "completion/complete",
            {"ref": {"type": "ref/prompt", "name": MARK}, "argument": {"name": "a", "value": MARK}},
        ),
        METHOD_NOT_FOUND,
        METHOD_NOT_FOUND,
    ),
    (
        request("resources/subscribe", {"uri": f"file:///{MARK}"}),
        METHOD_NOT_FOUND,
        METHOD_NOT_FOUND,
    ),
    (request("logging/setLevel", {"level": MARK}), INVALID_PARAMS, METHOD_NOT_FOUND),
    (request("resources/read", {"uri": f"file:///{MARK}"}), INVALID_PARAMS, INVALID_PARAMS),
    (
        request("prompts/get", {"name": MARK, "arguments": {"a": MARK}}),
        {"code": -32602, "message": "Unknown prompt"},
        {"code": -32602, "message": "Unknown prompt"},
    ),
    (
        request("tools/call", {"name": 5, "arguments": {}}),
        INVALID_PARAMS,
        # Before the request is read, the modern generation's own check of the name header.
        {
            "code": -32020,
            "message": "mcp-name header does not match the request body's 'name' parameter",
        },
    ),
    (
        request("tools/call", {"name": "list_accounts", "arguments": [MARK]}),
        INVALID_PARAMS,
        INVALID_PARAMS,
    ),
    (request("tools/call", {"arguments": {"q": MARK}}), INVALID_PARAMS, INVALID_PARAMS),
]


@pytest.mark.parametrize("generation", ["handshake", "modern"])
@pytest.mark.parametrize(
    ("body", "handshake", "modern"), REFUSED_INSIDE, ids=range(len(REFUSED_INSIDE))
)
def test_a_request_the_server_cannot_serve_is_answered_in_fixed_words(
    url: str,
    http: httpx2.Client,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
    generation: str,
    body: dict[str, Any],
    handshake: dict[str, Any],
    modern: dict[str, Any],
) -> None:
    caplog.set_level(logging.DEBUG)
    with Endpoint.reached(http, url, KEY, generation) as endpoint:
        response = endpoint.post(http, body)
        assert MARK not in response.text
        assert endpoint.ask(http, body) == {
            "jsonrpc": "2.0",
            "id": 7,
            "error": modern if generation == "modern" else handshake,
        }
        out, err = capfd.readouterr()
        logged = caplog.text + out + err
        assert MARK not in logged
        assert "Traceback" not in logged


def test_an_initialize_with_parameters_of_the_wrong_shape_is_invalid_params(
    url: str, http: httpx2.Client
) -> None:
    endpoint = Endpoint(url, KEY, "handshake-unopened")
    body = request("initialize", {"protocolVersion": 5, "capabilities": MARK, "clientInfo": [MARK]})
    response = endpoint.post(http, body)
    opened = response.headers.get("mcp-session-id")
    if opened is not None:
        close_session(http, url, KEY, opened)
    assert MARK not in response.text
    assert answer(response) == {"jsonrpc": "2.0", "id": 7, "error": INVALID_PARAMS}
