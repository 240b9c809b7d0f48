"""Running the MCP server: Streamable HTTP on the configured address, or stdio."""

from __future__ import annotations

import socket

import anyio
import uvicorn

from mailfathom.bootstrap import Services
from mailfathom.domain.errors import ConfigurationError
from mailfathom.entrypoints.mcp.assemble import build_server
from mailfathom.entrypoints.mcp.http_app import build_http_app


def serve_http(
    services: Services, *, port: int | None = None, ready: socket.socket | None = None
) -> None:
    """Serve until interrupted. `ready`, when given, is an already bound listening socket
    (tests pass one bound to port 0 and read the port back)."""
    config = services.config.mcp
    if not config.enabled:
        raise ConfigurationError(
            "McpEndpoint.Enabled is false: the endpoint is off until the configuration "
            "enables it and states how callers are admitted."
        )
    server = build_server(services)
    app = build_http_app(server, config)
    uvicorn_config = uvicorn.Config(
        app,
        host=config.host,
        port=port if port is not None else config.port,
        log_level="warning",
        access_log=False,
        lifespan="on",
    )
    runner = uvicorn.Server(uvicorn_config)
    anyio.run(runner.serve, [ready] if ready is not None else None)


def serve_stdio(services: Services) -> None:
    server = build_server(services)
    anyio.run(server.run_stdio_async)
