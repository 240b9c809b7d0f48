"""The SDK's session manager, for a replica among several behind a load balancer.

The SDK keeps each session of the handshake generation (`initialize`, then
`Mcp-Session-Id`) as a transport and a message loop in this process's memory, and answers
404 to an id it does not hold. A replica instead:

- describes each session it opens in the store (`Replicas.describe`: caller entry, token
  principal, negotiated version, the client's `initialize` parameters) before the answer
  to `initialize` leaves, so the client's next request may go anywhere;
- serves a request naming a session it does not hold, but the store does, by opening that
  session here as it was negotiated (no second handshake: the client sees one session);
- hands a client's answer to a question (a JSON-RPC response) to the replica that put the
  question and waits for it, when that is another one (`Replicas.route`), and gives the
  answers handed to it to its own sessions (`Replicas.deliver_answers`).

Whether the session exists and is the caller's was decided by the gate before
(`sessions.SharedSessionBook`); the SDK's own check of the token principal still applies,
against the principal the session was opened with.

The SDK offers no hook for any of this, so the subclass reaches into its manager (the tables
of transports and owners, its task group and lifespan state) and, to hand an answer over,
into a transport's read stream, as `mcp` 2.3 (the locked version) has them; the replica
tests (`tests/replicas/`) break on an upgrade that moves them.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pydantic
import structlog
from anyio.abc import TaskStatus
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, authorization_context
from mcp.server.connection import Connection
from mcp.server.runner import serve_connection
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER, StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
from mcp.shared.message import SessionMessage
from mcp.shared.transport_context import TransportContext
from mcp_types import InitializeRequestParams
from mcp_types.jsonrpc import jsonrpc_message_adapter
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Message, Receive, Scope, Send

from mailfathom.app.shared.replica_ports import StoredSession
from mailfathom.entrypoints.mcp.replica_state import Replicas
from mailfathom.entrypoints.mcp.server import MailFathomMcp
from mailfathom.entrypoints.mcp.sessions import RESERVATION_STATE_KEY

log = structlog.get_logger("mailfathom.mcp")


def _principal(scope: Scope) -> str | None:
    user = scope.get("user")
    if not isinstance(user, AuthenticatedUser):
        return None
    return json.dumps(authorization_context(user), sort_keys=True)


def _is_answer(body: bytes) -> bool:
    """Whether `body` is a client's JSON-RPC response (to a request this server sent)."""
    try:
        message = json.loads(body)
    except ValueError:
        return False
    return (
        isinstance(message, dict)
        and "method" not in message
        and "id" in message
        and ("result" in message or "error" in message)
    )


async def _body(receive: Receive) -> bytes:
    chunks = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replayed


class ReplicaSessionManager(StreamableHTTPSessionManager):
    """See the module docstring."""

    def __init__(self, replicas: Replicas, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.replicas = replicas

    @contextlib.asynccontextmanager
    async def run(self) -> AsyncIterator[None]:
        async with super().run(), anyio.create_task_group() as group:
            group.start_soon(self.replicas.keep_alive)
            group.start_soon(self.replicas.deliver_answers, self.deliver)
            try:
                yield
            finally:
                group.cancel_scope.cancel()

    async def _handle_stateful_request(self, scope: Scope, receive: Receive, send: Send) -> None:
        session_id = Headers(scope=scope).get(MCP_SESSION_ID_HEADER)
        if session_id is not None and session_id not in self._server_instances:
            stored = await self.replicas.find(session_id)
            if stored is not None:
                async with self._session_creation_lock:
                    if session_id not in self._server_instances:
                        await self._resume(stored)
        if session_id is not None and scope["method"] == "POST" and self._owns(scope, session_id):
            body = await _body(receive)
            if _is_answer(body) and await self.replicas.route(session_id, body.decode()):
                log.info("mcp.answer_routed")
                accepted = Response(status_code=202, headers={MCP_SESSION_ID_HEADER: session_id})
                await accepted(scope, receive, send)
                return
            receive = _replay(body, receive)
        await super()._handle_stateful_request(scope, receive, send)

    def _owns(self, scope: Scope, session_id: str) -> bool:
        user = scope.get("user")
        requestor = authorization_context(user) if isinstance(user, AuthenticatedUser) else None
        return session_id in self._server_instances and requestor == self._session_owners.get(
            session_id
        )

    async def _resume(self, stored: StoredSession) -> None:
        """Hold `stored` here as it was negotiated on whichever replica opened it."""
        transport = StreamableHTTPServerTransport(
            mcp_session_id=stored.session_id,
            is_json_response_enabled=self.json_response,
            event_store=self.event_store,
            security_settings=self.security_settings,
            retry_interval=self.retry_interval,
            idle_timeout=self.session_idle_timeout,
        )
        if stored.principal is not None:
            self._session_owners[stored.session_id] = json.loads(stored.principal)
        self._server_instances[stored.session_id] = transport
        assert self._task_group is not None
        await self._task_group.start(self._run_session, transport, stored, [])

    async def _serve_opening_request(
        self,
        http_transport: StreamableHTTPServerTransport,
        scope: Scope,
        receive: Receive,
        send: Send,
    ) -> None:
        session_id = http_transport.mcp_session_id
        assert session_id is not None
        reservation = (scope.get("state") or {}).get(RESERVATION_STATE_KEY)
        connections: list[Connection] = []
        described = False

        async def describing(message: Message) -> None:
            nonlocal described
            connection = connections[0] if connections else None
            if not described and connection is not None and connection.client_params is not None:
                described = True
                if isinstance(reservation, str):
                    await self.replicas.describe(
                        reservation,
                        session_id,
                        _principal(scope),
                        connection.protocol_version,
                        connection.client_params.model_dump_json(by_alias=True, exclude_none=True),
                    )
            await send(message)

        status: int | None = None

        async def watch(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await describing(message)

        established = False
        try:
            assert self._task_group is not None
            await self._task_group.start(self._run_session, http_transport, None, connections)
            await http_transport.handle_request(scope, receive, watch)
            established = status is not None and status < 400
        finally:
            if not established:
                await self._discard_session(session_id, http_transport)

    async def _run_session(
        self,
        transport: StreamableHTTPServerTransport,
        stored: StoredSession | None,
        connections: list[Connection],
        *,
        task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """The session's message loop, as the SDK runs it (`serve_loop`), on a connection
        made here so that a session opened elsewhere starts as negotiated there."""
        session_id = transport.mcp_session_id
        assert session_id is not None
        async with transport.connect() as (read_stream, write_stream):
            task_status.started()
            try:
                idle_scope = transport.idle_scope or anyio.CancelScope()
                with idle_scope:
                    dispatcher: JSONRPCDispatcher[TransportContext] = JSONRPCDispatcher(
                        read_stream, write_stream, inline_methods=frozenset({"initialize"})
                    )
                    connection = Connection.for_loop(
                        dispatcher,
                        session_id=session_id,
                        protocol_version_hint=stored.protocol_version if stored else None,
                    )
                    if stored is not None:
                        connection.client_params = InitializeRequestParams.model_validate_json(
                            stored.client_params
                        )
                        connection.initialized.set()
                    connections.append(connection)
                    await serve_connection(
                        self.app,
                        dispatcher,
                        connection=connection,
                        lifespan_state=self._lifespan_state,
                    )
            except Exception as error:
                log.error("mcp.replica_session_failed", error_type=type(error).__name__)
            finally:
                await self._discard_session(session_id, transport)

    async def deliver(self, session_id: str, body: str) -> None:
        """Give a client's answer, handed to this replica by another, to the session here
        (whose message loop drops an answer to anything it did not ask, as it always does)."""
        transport = self._server_instances.get(session_id)
        writer = transport._read_stream_writer if transport is not None else None
        if writer is None:
            log.info("mcp.replica_answer_dropped", reason="noSessionHere")
            return
        try:
            message = jsonrpc_message_adapter.validate_json(body, by_name=False)
        except pydantic.ValidationError:
            log.info("mcp.replica_answer_dropped", reason="malformed")
            return
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            await writer.send(SessionMessage(message))


def replica_mcp_app(server: MailFathomMcp, replicas: Replicas, path: str) -> Starlette:
    """The MCP app of `server` with its session manager replaced by a replica's, which
    the server then runs as its own (`server.session_manager`)."""
    sdk = server.session_manager
    manager = ReplicaSessionManager(
        replicas,
        app=server._lowlevel_server,
        event_store=sdk.event_store,
        json_response=sdk.json_response,
        security_settings=sdk.security_settings,
        retry_interval=sdk.retry_interval,
        max_request_body_size=sdk.max_request_body_size,
        session_idle_timeout=sdk.session_idle_timeout,
        max_sessions=sdk.max_sessions,
    )
    server._lowlevel_server._session_manager = manager
    return Starlette(routes=[Route(path, endpoint=StreamableHTTPASGIApp(manager))])
