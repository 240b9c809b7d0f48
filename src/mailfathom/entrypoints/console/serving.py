"""The console's listener inside `mailfathom serve`: bound before anything starts (a taken
port ends the command with a code, as the endpoint's does), then served beside the MCP
endpoint by the same event loop, stopping with it."""

from __future__ import annotations

import socket
from dataclasses import dataclass

import uvicorn

from mailfathom.bootstrap import Services
from mailfathom.domain.request_bounds import edit_form_octets
from mailfathom.entrypoints.console.pages import ConsoleUseCases, build_console_app
from mailfathom.entrypoints.mcp.run import CompanionServer, bind, listener_config


@dataclass
class ConsoleServing:
    services: Services
    listener: socket.socket
    where: str

    def server(self) -> tuple[uvicorn.Server, socket.socket]:
        config = self.services.config.console
        bodies = self.services.config.mail_delivery.max_body_characters
        app = build_console_app(
            console_use_cases(self.services),
            config.host,
            edit_octets=edit_form_octets(bodies),
            public_origin=config.public_origin,
        )
        server = CompanionServer(
            listener_config(app, config.host, self.listener, lifespan="off", server_header=False)
        )
        return server, self.listener

    def close(self) -> None:
        self.listener.close()


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
    )


def open_console(services: Services) -> ConsoleServing | None:
    """The console's bound listener, or None while `[Console]` is not enabled."""
    config = services.config.console
    if not config.enabled:
        return None
    listener = bind(config.host, config.port, what="the console", key="Console.Listen")
    host = f"[{config.host}]" if ":" in config.host else config.host
    return ConsoleServing(services, listener, f"http://{host}:{listener.getsockname()[1]}/")
