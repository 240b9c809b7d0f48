"""The JSON-RPC errors the MCP server answers with: each in fixed words, none repeating the
request.

A request the server cannot serve as asked is answered with a JSON-RPC error, in whichever
protocol generation and over whichever transport it came. The SDK words many of its own from
the request (the method it did not find, the resource it did not find, a prompt's name, a
library's message), so every error the server itself did not word (`Refusal`) keeps its code
and is answered in JSON-RPC 2.0's words for that code, without `data`. An error outside
JSON-RPC's own codes is one of the protocol's (an unsupported version, a capability the client
lacks), written by the SDK from what the server knows, and is kept as it is. A failure that is
no protocol error at all is logged by kind and place, like a tool's (54001), and answered
-32603.

A listing method is given a `cursor` only to continue a listing it issued, and this server
lists everything at once: a cursor is refused as one it never issued (-32602)."""

from __future__ import annotations

import uuid
from typing import Any

import structlog
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
)
from mcp_types import methods as spec_methods
from pydantic import ValidationError

from mailfathom.domain.codes import Code
from mailfathom.entrypoints.mcp.registry import failure_frames

log = structlog.get_logger("mailfathom.mcp")

JSON_RPC_WORDS = {
    PARSE_ERROR: "Parse error",
    INVALID_REQUEST: "Invalid Request",
    METHOD_NOT_FOUND: "Method not found",
    INVALID_PARAMS: "Invalid params",
    INTERNAL_ERROR: "Internal error",
}
LISTINGS = frozenset({"tools/list", "resources/list", "resources/templates/list", "prompts/list"})


class Refusal(MCPError):
    """An error this server words itself, in fixed words: answered as it stands."""


def unknown_tool() -> Refusal:
    """A call naming a tool this caller is not served, whether or not it exists."""
    return Refusal(INVALID_PARAMS, "Unknown tool")


def unknown_prompt() -> Refusal:
    return Refusal(INVALID_PARAMS, "Unknown prompt")


def invalid_cursor() -> Refusal:
    return Refusal(INVALID_PARAMS, "Invalid cursor")


def in_json_rpc_words(code: int) -> MCPError:
    return MCPError(code, JSON_RPC_WORDS[code])


async def answer_in_fixed_words(
    ctx: ServerRequestContext[Any, Any], call_next: CallNext
) -> HandlerResult:
    """Server middleware, outermost of the server's own (see the module docstring). A
    notification is passed on untouched: nothing answers one."""
    if ctx.request_id is None:
        return await call_next(ctx)
    if ctx.method in LISTINGS and (ctx.params or {}).get("cursor") is not None:
        raise invalid_cursor()
    try:
        return await call_next(ctx)
    except Refusal:
        raise
    except MCPError as error:
        if error.error.code not in JSON_RPC_WORDS:
            raise
        raise in_json_rpc_words(error.error.code) from None
    except ValidationError:
        raise in_json_rpc_words(INVALID_PARAMS) from None
    except Exception as error:
        log.error(
            "mcp.request_undiagnosed",
            method=ctx.method if ctx.method in spec_methods.SPEC_CLIENT_METHODS else "unrecognized",
            code=int(Code.UNDIAGNOSED),
            correlation_id=uuid.uuid4().hex[:16],
            error_type=type(error).__name__,
            stack=failure_frames(error),
        )
        raise in_json_rpc_words(INTERNAL_ERROR) from None
