"""`serve --processes N`: the MCP endpoint answered by N processes on one address.

This process binds the endpoint's address N times (`SO_REUSEPORT`, see `mcp.run`) and the
console's once, says what is served, and starts N serving processes, each handed a socket
of its own: the kernel gives each new connection to one of the sockets, by a hash of its
addresses. Where ports cannot be shared so, the processes accept on one socket, and a burst
of connections tends to go to the first one woken. The first process also runs the
background work (synchronization, delivery) and the console; the others answer calls only,
so no account is synchronized and no send is offered twice by one `serve`.

Once a process is started, this one closes its own copy of the process's socket: the
socket ends with the process, however it ends, and the kernel gives new connections to the
others at once (those already waiting on it are reset, see docs/operations.md). A process
that ends is started again on a socket bound afresh, after a pause that doubles while they
keep ending soon after starting (or while the address cannot be bound again). Ctrl-C or
SIGTERM stops them all (each stops as one `serve` does) and waits for them; a serving
process whose parent is gone stops by itself.

Processes are started fresh (`spawn`), not forked: the parent holds a database pool and
threads that a fork would copy half-way.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import signal
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from multiprocessing.process import BaseProcess
from pathlib import Path
from types import FrameType

import structlog
from rich.console import Console

from mailfathom.bootstrap import Services
from mailfathom.domain.errors import ConfigurationError
from mailfathom.entrypoints import logs
from mailfathom.entrypoints.logs import LogSettings
from mailfathom.entrypoints.workers.background import STOP_SECONDS, BackgroundPlan

log = structlog.get_logger("mailfathom.serve")

FIRST_PAUSE_SECONDS = 0.5
LONGEST_PAUSE_SECONDS = 30.0
# A process that served this long before it ended is started again without a pause.
STEADY_SECONDS = 10.0
PARENT_CHECK_SECONDS = 1.0


@dataclass(frozen=True, slots=True)
class ProcessPlan:
    """What each serving process is given: the configuration file it reads again, the bound
    sockets (`endpoint` its own, where ports are shared), and whether the first one
    synchronizes and delivers."""

    config_path: Path
    endpoint: socket.socket
    where: str
    console: socket.socket | None
    console_where: str | None
    sync: bool
    deliver: bool
    logs: LogSettings


@dataclass
class _Slot:
    index: int
    process: BaseProcess
    started: float
    pause: float = 0.0


@dataclass
class ProcessGroup:
    """The serving processes. Where the port is shared, `listeners` holds the socket each is
    started with (closed here once it is started) and `rebind` binds one for a process
    started again; otherwise every process accepts on `plan.endpoint`."""

    plan: ProcessPlan
    count: int
    listeners: list[socket.socket] = field(default_factory=list)
    rebind: Callable[[], socket.socket] | None = None
    stop: threading.Event = field(default_factory=threading.Event)
    slots: list[_Slot] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._context = multiprocessing.get_context("spawn")

    def _start(self, index: int, listener: socket.socket | None, pause: float = 0.0) -> _Slot:
        plan = self.plan if listener is None else replace(self.plan, endpoint=listener)
        process = self._context.Process(
            target=serve_one,
            args=(plan, index, os.getpid()),
            name=f"mailfathom-serve-{index}",
        )
        try:
            process.start()
        finally:
            if listener is not None:
                # The process holds the socket now: it is closed when the process ends.
                listener.close()
        return _Slot(index, process, time.monotonic(), pause)

    def run(self) -> None:
        """Start the processes and keep them running until `stop` is set."""
        listeners: list[socket.socket | None] = [*self.listeners] or [None] * self.count
        self.slots = [self._start(i, listener) for i, listener in enumerate(listeners)]
        log.info("serve.processes_started", processes=self.count)
        while not self.stop.is_set():
            sentinels = [s.process.sentinel for s in self.slots]
            ended = multiprocessing.connection.wait(sentinels, timeout=0.5)
            if self.stop.is_set():
                break
            for slot in [s for s in self.slots if s.process.sentinel in ended]:
                self._restart(slot)

    def _restart(self, ended: _Slot) -> None:
        ended.process.join()
        status = ended.process.exitcode
        log.warning("serve.process_ended", process=ended.index, exit_status=status)
        pause = 0.0
        if time.monotonic() - ended.started < STEADY_SECONDS:
            pause = _longer(ended.pause)
        while True:
            if pause and self.stop.wait(pause):
                return
            try:
                listener = self.rebind() if self.rebind is not None else None
            except ConfigurationError as error:
                log.error("serve.process_unbound", process=ended.index, code=error.code)
                pause = _longer(pause)
                continue
            break
        log.warning(
            "serve.process_restarted", process=ended.index, exit_status=status, pause_seconds=pause
        )
        self.slots[ended.index] = self._start(ended.index, listener, pause)

    def close(self, timeout: float = STOP_SECONDS + 5) -> None:
        """Ask every process to stop (SIGTERM), wait for them up to `timeout` in all, and
        kill what is left."""
        self.stop.set()
        for listener in self.listeners:
            listener.close()
        for slot in self.slots:
            if slot.process.is_alive():
                slot.process.terminate()
        deadline = time.monotonic() + timeout
        for slot in self.slots:
            slot.process.join(max(0.0, deadline - time.monotonic()))
        for slot in self.slots:
            if slot.process.is_alive():
                log.warning("serve.process_killed", process=slot.index)
                slot.process.kill()
                slot.process.join()


def _longer(pause: float) -> float:
    return min(max(pause * 2, FIRST_PAUSE_SECONDS), LONGEST_PAUSE_SECONDS)


def run_processes(
    services: Services,
    plan: BackgroundPlan,
    console: Console,
    *,
    config_path: Path,
    processes: int,
    port: int | None,
) -> None:
    """Bind, say what is served, and serve in `processes` processes until Ctrl-C or
    SIGTERM."""
    from mailfathom.entrypoints.cli.serving import announce, console_line
    from mailfathom.entrypoints.console.serving import open_console
    from mailfathom.entrypoints.mcp.run import SHARING_PORTS, SharedPort, open_http

    serving = open_http(services, port=port, share_port=True)
    assert serving.listener is not None
    # Every socket is bound before any process starts, so a port in use ends the command.
    listeners = [serving.listener]
    rebind = SharedPort.of(serving.listener).bind if SHARING_PORTS else None
    try:
        while rebind is not None and len(listeners) < processes:
            listeners.append(rebind())
        web = open_console(services)
    except BaseException:
        for listener in listeners:
            listener.close()
        raise
    group = ProcessGroup(
        ProcessPlan(
            config_path=config_path,
            endpoint=serving.listener,
            where=serving.where,
            console=web.listener if web is not None else None,
            console_where=web.where if web is not None else None,
            sync=bool(plan.accounts),
            deliver=plan.delivering,
            logs=logs.settled(),
        ),
        processes,
        listeners=listeners if rebind is not None else [],
        rebind=rebind,
    )
    previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}

    def stopping(signum: int, frame: FrameType | None) -> None:
        group.stop.set()

    try:
        announce(console, plan, serving, console_line(services, False, web), processes)
        for signum in previous:
            signal.signal(signum, stopping)
        try:
            group.run()
        finally:
            group.close()
            log.info("serve.stopped")
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        for listener in listeners:
            listener.close()
        if web is not None:
            web.close()


def serve_one(plan: ProcessPlan, index: int, parent: int) -> None:
    """One serving process: the configuration read again, the store opened (the parent has
    migrated it), the endpoint served on the inherited socket; the first process also runs
    the background work and the console."""
    from mailfathom.bootstrap import load_deployment
    from mailfathom.domain.errors import MailFathomError
    from mailfathom.entrypoints.cli.serving import prepare, serve_prepared
    from mailfathom.entrypoints.console.serving import ConsoleServing
    from mailfathom.entrypoints.mcp.assemble import build_server
    from mailfathom.entrypoints.mcp.run import Serving

    first = index == 0
    _stop_without_parent(parent)
    plan.logs.apply()
    try:
        deployment = load_deployment(plan.config_path)
        # Where log lines go was said once, by the parent.
        logs.use_data_dir(deployment.store.data_dir, Console(quiet=True))
        background = prepare(
            deployment, stdio=False, sync=plan.sync and first, deliver=plan.deliver and first
        )
        with Services.open(deployment, migrate_schema=False) as services:
            serving = Serving(services, build_server(services), plan.where, plan.endpoint)
            web = None
            if first and plan.console is not None and plan.console_where is not None:
                web = ConsoleServing(services, plan.console, plan.console_where)
            serve_prepared(services, background, serving, web, index=index)
    except MailFathomError as error:
        log.error("serve.process_failed", code=error.code, error_type=type(error).__name__)
        raise SystemExit(2) from None


def _stop_without_parent(parent: int) -> None:
    """Stop this process (as SIGTERM stops it) once its parent is gone."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_SECONDS)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, daemon=True, name="parent-watch").start()
