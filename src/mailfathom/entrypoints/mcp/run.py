"""Running the MCP server: Streamable HTTP on the configured address, or stdio.

Serving is opened in two steps so that what can fail on this machine fails before anything
starts: `open_http` / `open_stdio` build the server and (over HTTP) bind the socket,
raising `ConfigurationError` with a code for a port out of range (11008), an address that
cannot be listened on (11009) or a host that does not resolve (11010); `Serving.run` then
serves until interrupted.

Several processes serving one address (`serve --processes N`) each listen on a socket of
their own, bound with `SO_REUSEPORT` (`share_port`, `SharedPort`): Linux gives each new
connection to one socket of the group by a hash of its addresses, so a burst of connections
is spread over the processes instead of being taken by the first one woken. Elsewhere
(`SHARING_PORTS` false) they accept on one socket, as one process does.
"""

from __future__ import annotations

import contextlib
import errno
import socket
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import anyio
import structlog
import uvicorn
from starlette.types import ASGIApp

from mailfathom.bootstrap import Services
from mailfathom.domain.codes import CommandCode
from mailfathom.domain.errors import ConfigurationError
from mailfathom.domain.request_bounds import tool_request_octets
from mailfathom.entrypoints.health import Readiness
from mailfathom.entrypoints.mcp.assemble import build_server
from mailfathom.entrypoints.mcp.http_app import build_http_app
from mailfathom.entrypoints.mcp.replica_state import Replicas
from mailfathom.entrypoints.mcp.server import MailFathomMcp

log = structlog.get_logger("mailfathom.mcp")

# Where sockets bound with SO_REUSEPORT share new connections among themselves: elsewhere
# (BSD, macOS) the option lets them bind but not spread connections.
SHARING_PORTS = sys.platform == "linux" and hasattr(socket, "SO_REUSEPORT")


@dataclass
class Serving:
    """A server ready to serve: `where` is its URL, or "stdio"; `listener` the bound socket
    (None over stdio)."""

    services: Services
    server: MailFathomMcp
    where: str
    listener: socket.socket | None = None
    replicas: Replicas | None = None

    @property
    def transport(self) -> str:
        return "stdio" if self.listener is None else "Streamable HTTP"

    @property
    def tools_published(self) -> int:
        """The tools the deployment publishes and can serve now: what a caller holding every
        permission is listed at start (ask_mail counts once it can answer)."""
        return len(self.server.available_now(self.server.published_tools()))

    async def _serve_stdio(self) -> None:
        try:
            await self.server.run_stdio_async()
        finally:
            self.server.telemetry.settle()

    def run(self, companions: Sequence[tuple[uvicorn.Server, socket.socket]] = ()) -> None:
        """Serve until interrupted; over HTTP, `companions` (servers on listeners of their
        own, such as the console) are served beside the endpoint and stop with it."""
        if self.listener is None:
            anyio.run(self._serve_stdio)
            return
        config = self.services.config.mcp
        uvicorn_config = listener_config(
            build_http_app(
                self.server,
                config,
                self.services.download(),
                keys=self.services.caller_access().keys.admit,
                max_body_octets=tool_request_octets(
                    self.services.config.mail_delivery.max_body_characters
                ),
                readiness=Readiness(self.services.readiness_checks()),
                replicas=self.replicas,
            ),
            config.host,
            self.listener,
            lifespan="on",
        )
        anyio.run(serve_together, [(uvicorn.Server(uvicorn_config), self.listener), *companions])

    def close(self) -> None:
        if self.listener is not None:
            self.listener.close()


def listener_config(
    app: ASGIApp,
    host: str,
    listener: socket.socket,
    *,
    lifespan: Literal["on", "off"],
    server_header: bool = True,
) -> uvicorn.Config:
    """How every listener of `serve` is served. No forwarded header is believed: uvicorn
    would otherwise take `X-Forwarded-For` and `X-Forwarded-Proto` from a loopback peer as
    the client's address and scheme, and any process on this machine could then pose as
    another address (and slip a per-client bound) or as HTTPS. Behind a proxy every request
    is the proxy's; what the public side looks like comes from the configuration."""
    return uvicorn.Config(
        app,
        host=host,
        port=listener.getsockname()[1],
        log_level="warning",
        access_log=False,
        lifespan=lifespan,
        server_header=server_header,
        proxy_headers=False,
        forwarded_allow_ips=[],
    )


async def serve_together(servers: Sequence[tuple[uvicorn.Server, socket.socket]]) -> None:
    """Serve each server on its listener until one stops, then stop them all. The first
    handles Ctrl-C and SIGTERM (uvicorn's graceful shutdown); the others should not capture
    signals of their own (see `CompanionServer`)."""

    async def one(server: uvicorn.Server, listener: socket.socket) -> None:
        try:
            await server.serve([listener])
        finally:
            for other, _ in servers:
                other.should_exit = True

    async with anyio.create_task_group() as group:
        for server, listener in servers:
            group.start_soon(one, server, listener)


class CompanionServer(uvicorn.Server):
    """A server served beside the MCP endpoint: the endpoint's server handles the process's
    signals, and this one stops when told to (`serve_together`)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def bind(
    host: str,
    port: int,
    *,
    what: str = "MCP",
    key: str = "McpEndpoint.Listen",
    share_port: bool = False,
) -> socket.socket:
    """A TCP socket bound to `host`:`port`, or `ConfigurationError` with a code saying why
    there is none. It listens once serving starts (the event loop's server calls `listen`):
    until then a connection is refused, so a client that gets through finds the workers
    started. With `share_port` (where `SHARING_PORTS`), others can be bound beside it
    (`SharedPort`), and a port another socket holds is still refused: the address is first
    bound alone, which fails if anything holds it, even a socket that shares its port."""
    if not 0 < port < 65536:
        raise ConfigurationError(
            f"The port to serve {what} on must be from 1 to 65535.",
            code=int(CommandCode.LISTEN_PORT_OUT_OF_RANGE),
        )
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError):
        raise ConfigurationError(
            f"The host in {key} does not resolve to an address.",
            code=int(CommandCode.LISTEN_HOST_NOT_RESOLVED),
        ) from None
    family, kind, proto, _, address = found[0]
    shared = SharedPort(family, kind, proto, address, what)
    if not (share_port and SHARING_PORTS):
        return shared.bind(share=False)
    shared.bind(share=False).close()
    return shared.bind()


@dataclass(frozen=True, slots=True)
class SharedPort:
    """An address several sockets are bound to at once, each with `SO_REUSEPORT`: the
    kernel gives each new connection to one of those listening."""

    family: socket.AddressFamily
    kind: socket.SocketKind
    proto: int
    address: Any
    what: str = "MCP"

    @classmethod
    def of(cls, listener: socket.socket, what: str = "MCP") -> SharedPort:
        """The exact address `listener` is bound to (the port it was given, if asked for 0)."""
        return cls(listener.family, listener.type, listener.proto, listener.getsockname(), what)

    def bind(self, *, share: bool = True) -> socket.socket:
        """Another socket bound to the address, or `ConfigurationError` (11009)."""
        sock = socket.socket(self.family, self.kind, self.proto)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if share:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            sock.bind(self.address)
        except OSError as error:
            sock.close()
            reason = errno.errorcode.get(error.errno or 0, "an operating system error")
            raise ConfigurationError(
                f"The address to serve {self.what} on cannot be listened on: the port is in "
                "use, the address is not this machine's, or it is not permitted "
                f"({reason}).",
                code=int(CommandCode.LISTEN_ADDRESS_UNAVAILABLE),
            ) from None
        return sock


def open_http(services: Services, *, port: int | None = None, share_port: bool = False) -> Serving:
    config = services.config.mcp
    if not config.enabled:
        raise ConfigurationError(
            "McpEndpoint.Enabled is false: the endpoint is off until the configuration "
            "enables it and states how callers are admitted."
        )
    replicas = shared_state(services) if config.replicas else None
    server = build_server(services, replicas)
    listener = bind(config.host, port if port is not None else config.port, share_port=share_port)
    bound = listener.getsockname()[1]
    host = f"[{config.host}]" if ":" in config.host else config.host
    return Serving(services, server, f"http://{host}:{bound}/mcp", listener, replicas)


def shared_state(services: Services) -> Replicas:
    """What this process shares with the other replicas of the endpoint (`replica_state`),
    on the store's clock, measured before anything is served (a store that does not answer
    yet leaves it this machine's until the heartbeat measures it)."""
    config = services.config.mcp
    sessions, questions = services.replica_stores()
    clock = services.shared_clock()
    try:
        clock.measure()
    except Exception as error:
        log.warning("mcp.replica_clock_unread", error_type=type(error).__name__)
    return Replicas(
        sessions,
        questions,
        idle_seconds=config.session_idle_seconds,
        question_seconds=config.confirmation_timeout_seconds,
        clock=clock,
    )


def open_stdio(services: Services) -> Serving:
    return Serving(services, build_server(services), "stdio")
