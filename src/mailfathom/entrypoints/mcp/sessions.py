"""Sessions of the handshake protocol generation, bounded and owned per caller entry.

A client of the handshake generation (`initialize`, then `Mcp-Session-Id`) holds a session
on the server between requests. The SDK keeps those in one table for every caller, with one
limit for all of them: a single caller that opens sessions until that limit is reached would
lock every other caller out. This gate, which runs after admission, gives each caller entry
its own bound instead. A caller at its bound is answered 429 alone; a request naming a session
that another entry opened is answered exactly as one naming a session that does not exist
(404), and is never served.

The gate's view of a session ends no earlier than the SDK's: a session is idle from the moment
its last request in flight has been answered, and the SDK's idle clock (the same monotonic
clock) starts before that answer leaves the gate. Requests of the single-exchange generation
hold no session and pass through untouched.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import anyio
import structlog
from mcp_types import INVALID_REQUEST, ErrorData, JSONRPCError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mailfathom.domain.access import Caller

log = structlog.get_logger("mailfathom.mcp")

SESSION_HEADER = "mcp-session-id"
PROTOCOL_HEADER = "mcp-protocol-version"


@dataclass(slots=True)
class _Session:
    owner: str
    in_flight: int
    idle_since: float


def _error(message: str, status: int, headers: dict[str, str] | None = None) -> Response:
    error = ErrorData(code=INVALID_REQUEST, message=message)
    body = JSONRPCError(jsonrpc="2.0", id=None, error=error)
    return Response(
        body.model_dump_json(by_alias=True, exclude_unset=True),
        status_code=status,
        media_type="application/json",
        headers=headers,
    )


class SessionGate:
    """ASGI middleware between admission and the MCP app (see the module docstring)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        path: str,
        caller_key: str,
        per_caller: int,
        idle_seconds: float,
    ) -> None:
        self._app = app
        self._path = path
        self._caller_key = caller_key
        self._per_caller = per_caller
        self._idle_seconds = idle_seconds
        self._sessions: dict[str, _Session] = {}
        self._opening: Counter[str] = Counter()

    def open_sessions(self, owner: str) -> int:
        """Sessions `owner` holds now, counting those being opened."""
        self._forget_expired()
        return self._opening[owner] + sum(1 for s in self._sessions.values() if s.owner == owner)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        caller = (scope.get("state") or {}).get(self._caller_key)
        if scope["type"] != "http" or not scope["path"].startswith(self._path):
            await self._app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        version = headers.get(PROTOCOL_HEADER)
        if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            await self._app(scope, receive, send)
            return
        if not isinstance(caller, Caller):
            await _error("Session not found", 404)(scope, receive, send)
            return
        session_id = headers.get(SESSION_HEADER)
        if session_id is None:
            await self._open(caller.label, scope, receive, send)
        else:
            await self._continue(caller.label, session_id, scope, receive, send)

    async def _open(self, owner: str, scope: Scope, receive: Receive, send: Send) -> None:
        if self.open_sessions(owner) >= self._per_caller:
            log.warning("mcp.session_refused", caller=owner, open=self._per_caller)
            retry = {"Retry-After": str(self._retry_after(owner))}
            await _error("Too many open sessions for this caller", 429, retry)(scope, receive, send)
            return
        self._opening[owner] += 1
        opened: _Session | None = None

        async def watch(message: Message) -> None:
            nonlocal opened
            if message["type"] == "http.response.start" and opened is None:
                session_id = Headers(raw=message.get("headers", [])).get(SESSION_HEADER)
                if message["status"] < 400 and session_id:
                    self._opening[owner] -= 1
                    opened = _Session(owner, 1, anyio.current_time())
                    self._sessions[session_id] = opened
            await send(message)

        try:
            await self._app(scope, receive, watch)
        finally:
            if opened is None:
                self._opening[owner] -= 1
            else:
                opened.in_flight -= 1
                opened.idle_since = anyio.current_time()
            if self._opening[owner] <= 0:
                del self._opening[owner]

    async def _continue(
        self, owner: str, session_id: str, scope: Scope, receive: Receive, send: Send
    ) -> None:
        self._forget_expired()
        session = self._sessions.get(session_id)
        if session is None or session.owner != owner:
            await _error("Session not found", 404)(scope, receive, send)
            return
        status: int | None = None

        async def watch(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        session.in_flight += 1
        try:
            await self._app(scope, receive, watch)
        finally:
            session.in_flight -= 1
            session.idle_since = anyio.current_time()
            closed = scope["method"] == "DELETE" and status is not None and status < 400
            if status == 404 or closed:
                self._sessions.pop(session_id, None)

    def _forget_expired(self) -> None:
        now = anyio.current_time()
        expired = [
            session_id
            for session_id, s in self._sessions.items()
            if s.in_flight == 0 and now - s.idle_since >= self._idle_seconds
        ]
        for session_id in expired:
            del self._sessions[session_id]

    def _retry_after(self, owner: str) -> int:
        """Seconds until the first of `owner`'s idle sessions expires (a whole idle period
        when every one of them is busy)."""
        now = anyio.current_time()
        waits = [
            self._idle_seconds - (now - s.idle_since)
            for s in self._sessions.values()
            if s.owner == owner and s.in_flight == 0
        ]
        return max(1, math.ceil(min(waits, default=self._idle_seconds)))
