"""The JSON-RPC envelope of a message posted to the MCP endpoint, checked before the SDK reads
it.

JSON-RPC 2.0 answers a body that is not JSON with -32700 (Parse error), and one that is JSON
but not a single request, notification or response with -32600 (Invalid Request), both with
`id` null. A request's id is a string or an integer: a message naming a method beside an id
that is null, a fraction, a boolean, an object or an array is neither a request nor a
notification. Left to the SDK, the handshake generation's transport answers a malformed
envelope with -32602 and the validator's report (its type names, a link to its documentation,
the first and last characters of the body), and takes a message with such an id for a
notification: nothing runs and nothing answers, so the client waits until it gives up. Here
both are answered in fixed words in either protocol generation, and nothing else changes:
the message read is handed on as it came.

The check is made where the SDK would read the body, after the Host, Origin and Content-Type
rule (its refusal is answered here as the SDK answers it) and the Accept rule (a request that
fails it is handed on for the SDK to refuse).
"""

from __future__ import annotations

from typing import Any

import pydantic_core
from mcp.server.streamable_http import check_accept_headers
from mcp.server.transport_security import TransportSecurityMiddleware
from mcp_types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError, jsonrpc_message_adapter
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mailfathom.entrypoints.mcp.protocol_errors import JSON_RPC_WORDS
from mailfathom.entrypoints.mcp.server import MailFathomMcp


def envelope_error(body: bytes) -> int | None:
    """The JSON-RPC error code `body` is answered with before it is read, or None."""
    try:
        decoded = pydantic_core.from_json(body)
    except (ValueError, RecursionError):
        return PARSE_ERROR
    if not isinstance(decoded, dict) or not _has_request_id(decoded):
        return INVALID_REQUEST
    try:
        jsonrpc_message_adapter.validate_python(decoded, by_name=False)
    except ValidationError:
        return INVALID_REQUEST
    return None


def _has_request_id(message: dict[str, Any]) -> bool:
    """Whether a message naming a method carries no id (a notification), or a string or an
    integer. A response's id is left to the envelope's own rules."""
    if "method" not in message or "id" not in message:
        return True
    ident = message["id"]
    return isinstance(ident, str) or (isinstance(ident, int) and not isinstance(ident, bool))


def error_response(code: int) -> Response:
    body = JSONRPCError(
        jsonrpc="2.0", id=None, error=ErrorData(code=code, message=JSON_RPC_WORDS[code])
    )
    return Response(
        body.model_dump_json(by_alias=True, exclude_unset=True),
        status_code=400,
        media_type="application/json",
    )


class EnvelopeCheck:
    """ASGI middleware in front of `server`'s MCP app, for messages posted to `path`."""

    def __init__(self, app: ASGIApp, server: MailFathomMcp, path: str) -> None:
        self._app = app
        self._server = server
        self._path = path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] != self._path:
            await self._app(scope, receive, send)
            return
        # The session manager is read per request: a replica's replaces the SDK's.
        manager = self._server.session_manager
        request = Request(scope)
        security = TransportSecurityMiddleware(manager.security_settings)
        refused = await security.validate_request(request, is_post=True)
        if refused is not None:
            await refused(scope, receive, send)
            return
        has_json, has_sse = check_accept_headers(request)
        if not has_json or not (has_sse or manager.json_response):
            await self._app(scope, receive, send)
            return
        body, replay = await _read(receive)
        code = envelope_error(body)
        if code is not None:
            await error_response(code)(scope, replay, send)
            return
        await self._app(scope, replay, send)


async def _read(receive: Receive) -> tuple[bytes, Receive]:
    """The whole body (bounded in front of the endpoint), and a `receive` that hands it on
    once before what follows it."""
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        body += message.get("body", b"")
        if not message.get("more_body", False):
            break
    whole: Message = {"type": "http.request", "body": bytes(body), "more_body": False}
    given = False

    async def replay() -> Message:
        nonlocal given
        if not given:
            given = True
            return whole
        return await receive()

    return bytes(body), replay
