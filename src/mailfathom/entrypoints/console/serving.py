"""The console's listener inside `mailfathom serve`: bound before anything starts (a taken
port ends the command with a code, as the endpoint's does), then served beside the MCP
endpoint by the same event loop, stopping with it."""

from __future__ import annotations

import socket
import threading
from dataclasses import dataclass

import uvicorn

from mailfathom.bootstrap import Services
from mailfathom.domain.request_bounds import edit_form_octets
from mailfathom.entrypoints.console.pages import (
    DEFAULT_EDIT_OCTETS,
    ConsoleUseCases,
    build_console_app,
)
from mailfathom.entrypoints.mcp.run import CompanionServer, bind, listener_config


@dataclass
class ConsoleServing:
    services: Services
    listener: socket.socket
    where: str

    def server(self) -> tuple[uvicorn.Server, socket.socket]:
        config = self.services.config.console
        bodies = self.services.config.mail_delivery.max_body_characters
        server = console_server(
            console_use_cases(self.services),
            config.host,
            self.listener,
            edit_octets=edit_form_octets(bodies),
            public_origin=config.public_origin,
        )
        return server, self.listener

    def close(self) -> None:
        self.listener.close()


class ConsoleServer(CompanionServer):
    """The console's server: it ends the live streams (which never end by themselves)
    before it waits for open connections to close, so stopping never hangs on an open page."""

    def __init__(self, config: uvicorn.Config, closing: threading.Event) -> None:
        super().__init__(config)
        self._closing = closing

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self._closing.set()
        await super().shutdown(sockets)


def console_server(
    uses: ConsoleUseCases,
    host: str,
    listener: socket.socket,
    *,
    edit_octets: int = DEFAULT_EDIT_OCTETS,
    public_origin: str | None = None,
) -> ConsoleServer:
    """The console's application over `uses`, served on `listener` (bound to `host`) once
    started."""
    closing = threading.Event()
    app = build_console_app(
        uses, host, closing, edit_octets=edit_octets, public_origin=public_origin
    )
    config = listener_config(app, host, listener, lifespan="off", server_header=False)
    return ConsoleServer(config, closing)


def console_use_cases(services: Services) -> ConsoleUseCases:
    """Every page's use cases over one deployment's services."""
    return ConsoleUseCases(
        services.console_access,
        services.console_overview,
        drafts=services.console_drafts,
        account_names=services.account_names,
        outbox=services.console_outbox,
        mutations=services.console_mutations,
        health=services.console_health,
        contacts=services.console_contacts,
        callers=services.caller_access,
        passkeys=services.console_passkeys,
        live=services.console_news,
    )


def open_console(services: Services) -> ConsoleServing | None:
    """The console's bound listener, or None while `[Console]` is not enabled."""
    config = services.config.console
    if not config.enabled:
        return None
    listener = bind(config.host, config.port, what="the console", key="Console.Listen")
    host = f"[{config.host}]" if ":" in config.host else config.host
    return ConsoleServing(services, listener, f"http://{host}:{listener.getsockname()[1]}/")
