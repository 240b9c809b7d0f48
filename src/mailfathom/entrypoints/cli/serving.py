"""Serving the MCP tools with synchronization and delivery running beside them.

Everything that can be checked is checked before anything starts: the endpoint is enabled
(over HTTP), every secret the planned work needs can be read, and the address is bound. What
will run is said in one start line and a line each for synchronization and delivery (on
standard error under `serve`, which keeps standard output to the protocol under `--stdio`).

Ctrl-C and SIGTERM end the server the way each transport ends (uvicorn's graceful shutdown,
or the cancellation of the stdio session), then the workers are stopped and waited for.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from types import FrameType
from typing import TYPE_CHECKING

import structlog
from rich.console import Console

from mailfathom.bootstrap import Services, read_secret, require_secrets
from mailfathom.domain.codes import CommandCode
from mailfathom.domain.config import DeploymentConfig
from mailfathom.domain.errors import ConfigurationError
from mailfathom.entrypoints.workers.background import (
    BackgroundPlan,
    plan_background,
    start_background,
)

if TYPE_CHECKING:
    from mailfathom.entrypoints.console.serving import ConsoleServing
    from mailfathom.entrypoints.mcp.run import Serving

log = structlog.get_logger("mailfathom.serve")


def prepare(
    config: DeploymentConfig, *, stdio: bool, sync: bool, deliver: bool, processes: int = 1
) -> BackgroundPlan:
    """What serving will run; raises `ConfigurationError` for anything that would only fail
    once started (over HTTP, the secret the endpoint introspects tokens with included; over
    either transport, the key of the chat endpoint questions are answered with), and for
    more than one process where one is all that can serve."""
    if processes > 1 and stdio:
        raise ConfigurationError(
            "serve --stdio speaks to one client in one process: --processes (or "
            "McpEndpoint.Processes) must be 1.",
            code=int(CommandCode.PROCESSES_OVER_STDIO),
        )
    url = config.store.database_url
    if processes > 1 and (url is None or url.startswith("sqlite")):
        raise ConfigurationError(
            "Serving in more than one process needs PostgreSQL (Store.DatabaseUrl): SQLite "
            "has one writer. Serve in one process, or move the store to PostgreSQL.",
            code=int(CommandCode.PROCESSES_NEED_POSTGRESQL),
        )
    if processes > 1 and not config.mcp.replicas:
        raise ConfigurationError(
            "Serving in more than one process keeps sessions and questions waiting for a "
            "person in the store, which McpEndpoint.Replicas = true (with StateSecret) turns on.",
            code=int(CommandCode.PROCESSES_NEED_REPLICAS),
        )
    if not stdio and not config.mcp.enabled:
        raise ConfigurationError(
            "McpEndpoint.Enabled is false: serving over HTTP needs the endpoint enabled, with "
            "the callers it admits (or serve over --stdio)."
        )
    plan = plan_background(config, sync=sync, deliver=deliver)
    require_secrets(plan.secrets)
    oauth = config.mcp.oauth
    if not stdio and oauth is not None and oauth.introspection_client_secret is not None:
        read_secret(oauth.introspection_client_secret)
    if config.mcp.state_secret is not None:
        read_secret(config.mcp.state_secret)
    chat = config.answering.endpoint
    if chat is not None and chat.api_key is not None:
        read_secret(chat.api_key)
    return plan


def run(
    services: Services,
    plan: BackgroundPlan,
    console: Console,
    *,
    stdio: bool,
    port: int | None = None,
) -> None:
    """Serve until the client leaves (stdio), or until Ctrl-C or SIGTERM. Over HTTP the
    address is bound before anything starts, so a port that is taken or out of range ends
    the command with a code (`ConfigurationError`) and no worker ever ran."""
    # The MCP stack is imported only by the commands that serve it.
    from mailfathom.entrypoints.console.serving import open_console
    from mailfathom.entrypoints.mcp.run import open_http, open_stdio

    serving = open_stdio(services) if stdio else open_http(services, port=port)
    try:
        web = None if stdio else open_console(services)
    except BaseException:
        serving.close()
        raise
    try:
        announce(console, plan, serving, console_line(services, stdio, web))
        serve_prepared(services, plan, serving, web, console=console)
    finally:
        serving.close()
        if web is not None:
            web.close()


def serve_prepared(
    services: Services,
    plan: BackgroundPlan,
    serving: Serving,
    web: ConsoleServing | None,
    *,
    index: int = 0,
    console: Console | None = None,
) -> None:
    """Run the background work of `plan` and serve `serving` (and the console) on their
    bound listeners until interrupted, then stop the work. The process's metrics go to the
    endpoint's registry, and its operations listener (`[Operations] Listen`, on its port
    plus `index`, the process's number among those serving together) serves them with the
    process's liveness and readiness."""
    from mailfathom.entrypoints.ops_http import operations_of
    from mailfathom.entrypoints.work_metrics import publish_process

    registry = serving.server.telemetry.registry
    metrics = publish_process(registry, "serve")
    operations = operations_of(services, registry, index=index)
    try:
        if operations is not None and console is not None:
            console.print(f"Operations: at {operations.where}", markup=False, highlight=False)
        with _terminate_as_interrupt():
            work = start_background(services, plan, metrics)
            log.info(
                "serve.started",
                transport="stdio" if serving.listener is None else "http",
                synchronizing=plan.synchronizing,
                delivering=plan.delivering,
            )
            try:
                serving.run([web.server()] if web is not None else [])
            except KeyboardInterrupt:
                pass
            finally:
                work.close()
                log.info("serve.stopped")
    finally:
        if operations is not None:
            operations.close()


def start_line(serving: Serving) -> str:
    """The one line saying what is served: where, over which transport, to how many
    configured callers, and how many tools the deployment publishes."""
    where = (
        "on stdio" if serving.listener is None else f"at {serving.where} over {serving.transport}"
    )
    callers = len(serving.services.config.mcp.callers)
    return (
        f"Serving MCP {where}: {callers} caller(s) configured, "
        f"{serving.tools_published} tool(s) published; Ctrl-C stops it."
    )


def console_line(services: Services, stdio: bool, web: ConsoleServing | None) -> str:
    if web is not None:
        return f"Console: at {web.where}"
    if services.config.console.enabled and stdio:
        return "Console: off (it is served beside the HTTP endpoint, not over --stdio)"
    return "Console: off (Console.Enabled is false)"


def announce(
    console: Console, plan: BackgroundPlan, serving: Serving, web: str, processes: int = 1
) -> None:
    modes = ", ".join(f"{a.account_id} ({a.sync_mode.value})" for a in plan.accounts)
    lines = [
        start_line(serving),
        *(
            [f"Processes: {processes} answering calls, the first also running what follows"]
            if processes > 1
            else []
        ),
        f"Synchronizing: {modes}" if modes else f"Synchronizing: off ({plan.sync_off_reason})",
        "Delivering queued sends: on"
        if plan.delivering
        else f"Delivering queued sends: off ({plan.delivery_off_reason})",
        web,
    ]
    for line in lines:
        console.print(line, markup=False, highlight=False, soft_wrap=True)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    signal.raise_signal(signal.SIGINT)


@contextlib.contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM stops the process the way Ctrl-C does, so the workers are stopped and waited
    for rather than killed with it. (uvicorn handles both while it serves and raises the one
    it caught again afterwards; the stdio session is cancelled by the event loop's own
    handling of SIGINT.)"""
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
