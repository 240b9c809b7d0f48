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

Where sessions are kept is the gate's book: this process's memory (`MemorySessions`, one
process), or the store shared by replicas (`SharedSessionBook`, `replica_state`).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Protocol

import anyio
import structlog
from mcp_types import INVALID_REQUEST, ErrorData, JSONRPCError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mailfathom.domain.access import Caller
from mailfathom.entrypoints.mcp.replica_state import Replicas

log = structlog.get_logger("mailfathom.mcp")

SESSION_HEADER = "mcp-session-id"
PROTOCOL_HEADER = "mcp-protocol-version"
RESERVATION_STATE_KEY = "mailfathom_session_reservation"
"""Where the gate leaves the place it took for a session being opened, for the session
manager of a replica to describe once the session is opened (`replica_manager`)."""


def _error(message: str, status: int, headers: dict[str, str] | None = None) -> Response:
    error = ErrorData(code=INVALID_REQUEST, message=message)
    body = JSONRPCError(jsonrpc="2.0", id=None, error=error)
    return Response(
        body.model_dump_json(by_alias=True, exclude_unset=True),
        status_code=status,
        media_type="application/json",
        headers=headers,
    )


class SessionBook(Protocol):
    """Where the gate keeps the sessions it admits."""

    async def reserve(self, owner: str, most: int) -> str | None:
        """A place for a session `owner` opens, or None when it holds `most` already."""

    async def opened(self, reservation: str, owner: str, session_id: str) -> None: ...

    async def abandoned(self, reservation: str, owner: str) -> None: ...

    async def enter(self, owner: str, session_id: str) -> bool:
        """Whether `session_id` is open and `owner`'s; a request in it is then in flight."""

    async def leave(self, session_id: str, *, closed: bool) -> None: ...

    async def retry_after(self, owner: str) -> int: ...


@dataclass(slots=True)
class _Session:
    owner: str
    in_flight: int
    idle_since: float


class MemorySessions:
    """The sessions of one process, in its memory."""

    def __init__(self, idle_seconds: float) -> None:
        self._idle_seconds = idle_seconds
        self._sessions: dict[str, _Session] = {}
        self._opening: Counter[str] = Counter()

    def open_sessions(self, owner: str) -> int:
        """Sessions `owner` holds now, counting those being opened."""
        self._forget_expired()
        return self._opening[owner] + sum(1 for s in self._sessions.values() if s.owner == owner)

    async def reserve(self, owner: str, most: int) -> str | None:
        if self.open_sessions(owner) >= most:
            return None
        self._opening[owner] += 1
        return owner

    async def opened(self, reservation: str, owner: str, session_id: str) -> None:
        self._drop_opening(owner)
        self._sessions[session_id] = _Session(owner, 1, anyio.current_time())

    async def abandoned(self, reservation: str, owner: str) -> None:
        self._drop_opening(owner)

    def _drop_opening(self, owner: str) -> None:
        self._opening[owner] -= 1
        if self._opening[owner] <= 0:
            del self._opening[owner]

    async def enter(self, owner: str, session_id: str) -> bool:
        self._forget_expired()
        session = self._sessions.get(session_id)
        if session is None or session.owner != owner:
            return False
        session.in_flight += 1
        return True

    async def leave(self, session_id: str, *, closed: bool) -> None:
        session = self._sessions.get(session_id)
        if session is None:
            return
        session.in_flight -= 1
        session.idle_since = anyio.current_time()
        if closed:
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

    async def retry_after(self, owner: str) -> int:
        """Seconds until the first of `owner`'s idle sessions expires (a whole idle period
        when every one of them is busy)."""
        now = anyio.current_time()
        waits = [
            self._idle_seconds - (now - s.idle_since)
            for s in self._sessions.values()
            if s.owner == owner and s.in_flight == 0
        ]
        return max(1, math.ceil(min(waits, default=self._idle_seconds)))


class SharedSessionBook:
    """The sessions of every replica, in the store (`Replicas`). A session is opened once
    the session manager describes it (`replica_manager`), before its first answer leaves."""

    def __init__(self, replicas: Replicas) -> None:
        self._replicas = replicas

    async def reserve(self, owner: str, most: int) -> str | None:
        return await self._replicas.reserve(owner, most)

    async def opened(self, reservation: str, owner: str, session_id: str) -> None:
        await self._replicas.enter(session_id)

    async def abandoned(self, reservation: str, owner: str) -> None:
        await self._replicas.release(reservation)

    async def enter(self, owner: str, session_id: str) -> bool:
        stored = await self._replicas.find(session_id)
        if stored is None or stored.caller != owner:
            return False
        await self._replicas.enter(session_id)
        return True

    async def leave(self, session_id: str, *, closed: bool) -> None:
        await self._replicas.leave(session_id, closed=closed)

    async def retry_after(self, owner: str) -> int:
        return await self._replicas.retry_after(owner)


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
        book: SessionBook | None = None,
    ) -> None:
        self._app = app
        self._path = path
        self._caller_key = caller_key
        self._per_caller = per_caller
        self._book = book if book is not None else MemorySessions(idle_seconds)

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
        reservation = await self._book.reserve(owner, self._per_caller)
        if reservation is None:
            log.warning("mcp.session_refused", caller=owner, open=self._per_caller)
            retry = {"Retry-After": str(await self._book.retry_after(owner))}
            await _error("Too many open sessions for this caller", 429, retry)(scope, receive, send)
            return
        scope.setdefault("state", {})[RESERVATION_STATE_KEY] = reservation
        opened: str | None = None

        async def watch(message: Message) -> None:
            nonlocal opened
            if message["type"] == "http.response.start" and opened is None:
                session_id = Headers(raw=message.get("headers", [])).get(SESSION_HEADER)
                if message["status"] < 400 and session_id:
                    opened = session_id
                    await self._book.opened(reservation, owner, session_id)
            await send(message)

        try:
            await self._app(scope, receive, watch)
        finally:
            with anyio.CancelScope(shield=True):
                if opened is None:
                    await self._book.abandoned(reservation, owner)
                else:
                    await self._book.leave(opened, closed=False)

    async def _continue(
        self, owner: str, session_id: str, scope: Scope, receive: Receive, send: Send
    ) -> None:
        if not await self._book.enter(owner, session_id):
            await _error("Session not found", 404)(scope, receive, send)
            return
        left = False

        async def watch(message: Message) -> None:
            nonlocal left
            if message["type"] == "http.response.start":
                status = message["status"]
                ended = status == 404 or (scope["method"] == "DELETE" and status < 400)
                if ended:
                    # Before the answer leaves: the client's next request, on any replica,
                    # already finds the session gone.
                    left = True
                    with anyio.CancelScope(shield=True):
                        await self._book.leave(session_id, closed=True)
            await send(message)

        try:
            await self._app(scope, receive, watch)
        finally:
            if not left:
                with anyio.CancelScope(shield=True):
                    await self._book.leave(session_id, closed=False)
