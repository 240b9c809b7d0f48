"""`mailfathom worker`: background work without the MCP endpoint, one role or several.

Each role scales on its own, with as many processes (on as many machines) as wanted, all
reading the same configuration file and sharing one store:

- `sync`: claims its share of the accounts by lease and keeps those synchronized (push or
  polling, the owner changes recorded for them, drafts-folder upkeep, trust readings);
- `delivery`: the delivery pass, each send claimed under a lease;
- `embedding`: embeds stored mail while it holds the deployment's embedding lease, so only
  one process at a time embeds (the others wait to take over).

Claims and releases are logged by account id and worker id only.
"""

from __future__ import annotations

import enum
import signal
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import structlog
import typer

from mailfathom.bootstrap import (
    Services,
    require_secrets,
    secrets_to_deliver,
    secrets_to_synchronize,
)
from mailfathom.domain.errors import ConfigurationError, MailFathomError
from mailfathom.entrypoints.cli.loading import load
from mailfathom.entrypoints.cli.operations_option import OpsListenOption, with_ops_listen
from mailfathom.entrypoints.cli.terminal import say_error, status_err
from mailfathom.entrypoints.workers.background import STOP_SECONDS as BACKGROUND_STOP_SECONDS
from mailfathom.entrypoints.workers.background import wait_stopped
from mailfathom.entrypoints.workers.delivery import run_delivery, sending_configured
from mailfathom.entrypoints.workers.synchronization import (
    shares_store,
    start_leased_embedding,
    start_leased_sync,
    worker_id,
)

if TYPE_CHECKING:
    from mailfathom.entrypoints.work_metrics import WorkMetrics

log = structlog.get_logger("mailfathom.worker")
# How long a stopping worker waits for its work, in all: longer than `serve` does (an SMTP
# session of the delivery role may be near its end), and at least the lease loops' bound.
STOP_SECONDS = max(60.0, BACKGROUND_STOP_SECONDS)


class Role(enum.StrEnum):
    SYNC = "sync"
    DELIVERY = "delivery"
    EMBEDDING = "embedding"


def worker(
    role: Annotated[
        list[Role],
        typer.Option("--role", "-r", help="sync, delivery or embedding (repeatable)."),
    ],
    config: Annotated[
        Path | None,
        typer.Option("--config", "-c", help="Configuration file (default: $MAILFATHOM_CONFIG)."),
    ] = None,
    given_id: Annotated[
        str | None,
        typer.Option(
            "--id", help="This worker's name in the lease rows (default: host-pid-random)."
        ),
    ] = None,
    ops_listen: OpsListenOption = None,
) -> None:
    """Run background work (synchronization, delivery, embedding) until stopped."""
    try:
        name = worker_id(given_id)
        deployment = with_ops_listen(load(config), ops_listen)
        roles = set(role)
        if Role.SYNC in roles:
            if not deployment.sync.enabled:
                raise ConfigurationError("Sync.Enabled is false: there is nothing to synchronize.")
            require_secrets(secrets_to_synchronize(deployment.accounts))
        if Role.DELIVERY in roles:
            if not sending_configured(deployment):
                raise ConfigurationError("No account may send: there is nothing to deliver.")
            require_secrets(secrets_to_deliver(deployment))
        with Services.open(deployment) as services:
            asked_to_stop = _run(services, roles, name)
    except MailFathomError as error:
        say_error(str(error))
        raise typer.Exit(code=2) from None
    if not asked_to_stop:
        # Work that ended by itself is a failure, so a supervisor restarts the worker.
        say_error("The worker's work ended without being asked to stop.")
        raise typer.Exit(code=1)


def _run(services: Services, roles: set[Role], name: str) -> bool:
    """The roles' work, with the process's liveness, readiness and metrics on the
    operations listener where one is configured (`[Operations] Listen`, `--ops-listen`);
    answers whether the stop was asked for (a signal)."""
    from prometheus_client import CollectorRegistry

    from mailfathom.entrypoints.ops_http import operations_of
    from mailfathom.entrypoints.work_metrics import publish_process

    if roles & {Role.SYNC, Role.EMBEDDING} and not shares_store(services):
        # SQLite has one writer: there, `serve` or `sync --continuous` is the one process
        # that synchronizes and embeds.
        raise ConfigurationError(
            "The sync and embedding roles share a PostgreSQL store; on SQLite, `serve` or "
            "`sync --continuous` synchronizes and embeds."
        )
    registry = CollectorRegistry()
    metrics = publish_process(registry, *sorted(r.value for r in roles))
    services.work_meter = metrics
    operations = operations_of(services, registry)
    if operations is not None:
        status_err.print(f"Operations: at {operations.where}", markup=False, highlight=False)
    try:
        return _work(services, roles, name, metrics)
    finally:
        if operations is not None:
            operations.close()


def _work(services: Services, roles: set[Role], name: str, metrics: WorkMetrics) -> bool:
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    threads: list[threading.Thread] = []
    if Role.SYNC in roles:
        threads += start_leased_sync(
            services, services.config.accounts, stop, name, embedding=False
        )
    if Role.EMBEDDING in roles:
        started = start_leased_embedding(services, stop, name)
        if not started:
            status_err.print("Embedding: off (no embedding profile is active)", markup=False)
        threads += started
    if Role.DELIVERY in roles:
        delivering = threading.Thread(
            target=run_delivery,
            args=(services, stop),
            kwargs={"delivered": metrics.delivered},
            daemon=True,
            name="delivery",
        )
        delivering.start()
        threads.append(delivering)
    if not threads:
        raise ConfigurationError("None of the roles asked for has work in this deployment.")
    chosen = sorted(r.value for r in roles)
    log.info("worker.started", worker=name, roles=chosen)
    status_err.print(f"Worker {name}: {', '.join(chosen)}; stop with Ctrl-C.", markup=False)
    while not stop.is_set() and any(t.is_alive() for t in threads):
        stop.wait(1.0)
    asked = stop.is_set()
    stop.set()
    wait_stopped(threads, STOP_SECONDS)
    log.info("worker.stopped", worker=name, asked=asked)
    return asked
