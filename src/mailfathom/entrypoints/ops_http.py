"""The operations listener: `/livez`, `/readyz` and `/metrics` of one process on an address of
its own (`[Operations] Listen`), served in a thread of its own, so that any process can start
one whatever else it serves: a worker that serves nothing else, or each of several `serve`
processes sharing the MCP port, whose metrics a scraper must tell apart (each process
listens on a port of its own: `OperationsConfig.port_of`). `/metrics` is served only where
the deployment names the scraper's key (`McpEndpoint.MetricsApiKeySha256`), to a request
presenting it, as on the MCP listener; `/livez` and `/readyz` need none (see `health`).
"""

from __future__ import annotations

import socket
import threading
from dataclasses import dataclass, field

import uvicorn
from prometheus_client import CollectorRegistry
from starlette.applications import Starlette

from mailfathom.bootstrap import Services
from mailfathom.entrypoints.health import Readiness, ReadinessChecks, health_routes
from mailfathom.entrypoints.mcp.http_app import registry_route, transport_security
from mailfathom.entrypoints.mcp.run import CompanionServer, bind, listener_config


def operations_app(
    readiness: Readiness, registry: CollectorRegistry, host: str, metrics_digest: str | None
) -> Starlette:
    routes = health_routes(readiness, transport_security(host))
    if metrics_digest is not None:
        routes.append(registry_route(registry, metrics_digest, host))
    return Starlette(routes=routes)


@dataclass
class OperationsListener:
    """An operations listener serving in a thread of its own until `close`."""

    where: str
    server: uvicorn.Server
    listener: socket.socket
    thread: threading.Thread = field(init=False)

    def start(self) -> OperationsListener:
        self.thread = threading.Thread(
            target=self.server.run, args=([self.listener],), daemon=True, name="operations"
        )
        self.thread.start()
        return self

    def close(self, timeout: float = 5.0) -> None:
        self.server.should_exit = True
        if hasattr(self, "thread"):
            self.thread.join(timeout)
        self.listener.close()


def serve_operations(
    host: str,
    port: int,
    checks: ReadinessChecks,
    registry: CollectorRegistry,
    *,
    metrics_digest: str | None = None,
) -> OperationsListener:
    """Bind `host`:`port` (raising `ConfigurationError` with a code when it cannot be, as
    every listener of MailFathom does) and serve `/livez`, `/readyz` over `checks` and, where
    `metrics_digest` names the scraper's key, `/metrics` of `registry`, until `close`."""
    listener = bind(host, port, what="operations", key="Operations.Listen")
    try:
        app = operations_app(Readiness(checks), registry, host, metrics_digest)
        server = CompanionServer(
            listener_config(app, host, listener, lifespan="off", server_header=False)
        )
    except BaseException:
        listener.close()
        raise
    shown = f"[{host}]" if ":" in host else host
    where = f"http://{shown}:{listener.getsockname()[1]}/"
    return OperationsListener(where, server, listener).start()


def operations_of(
    services: Services, registry: CollectorRegistry, *, index: int = 0
) -> OperationsListener | None:
    """The operations listener `[Operations] Listen` asks for (on its port plus `index`, the
    process's number among those started together), serving this process's readiness
    checks and `registry`; None when the configuration asks for none."""
    operations = services.config.operations
    if operations.host is None or operations.port is None:
        return None
    return serve_operations(
        operations.host,
        operations.port_of(index),
        services.readiness_checks(),
        registry,
        metrics_digest=services.config.mcp.metrics_api_key_sha256,
    )
