"""The sockets of `serve --processes N`: one per process on one port, a port another socket
holds refused, and a process that ends leaving no socket behind (its replacement gets one
bound afresh), with processes stood in for by ones that only hold their socket."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog

from mailfathom.domain.codes import CommandCode
from mailfathom.domain.errors import ConfigurationError
from mailfathom.entrypoints.cli import serving_processes
from mailfathom.entrypoints.cli.serving_processes import ProcessGroup, ProcessPlan
from mailfathom.entrypoints.logs import LogSettings
from mailfathom.entrypoints.mcp.run import SHARING_PORTS, SharedPort, bind
from waiting import wait_for

CONNECTIONS = 24


def test_a_shared_port_takes_one_socket_per_process_and_no_stranger() -> None:
    # The machines this suite runs on are Linux, where ports are shared.
    assert SHARING_PORTS
    first = bind("127.0.0.1", _free_port(), share_port=True)
    beside = SharedPort.of(first).bind()
    try:
        assert beside.getsockname() == first.getsockname()
        port = first.getsockname()[1]
        first.listen()
        beside.listen()
        # Anything else on the port is refused once it is served, even a socket that would
        # share it.
        for share_port in (True, False):
            with pytest.raises(ConfigurationError) as refused:
                bind("127.0.0.1", port, share_port=share_port)
            assert refused.value.code == CommandCode.LISTEN_ADDRESS_UNAVAILABLE
    finally:
        first.close()
        beside.close()


class _Stand:
    """A serving process that holds its socket (listening, as a serving process does) until
    it ends."""

    def __init__(self, target: object, args: tuple[Any, ...], name: str) -> None:
        self.plan: ProcessPlan = args[0]
        self.index: int = args[1]
        self.held: socket.socket | None = None
        self.exitcode: int | None = None
        self.sentinel, self._end = os.pipe()

    def start(self) -> None:
        self.held = self.plan.endpoint.dup()
        self.held.listen()
        self.held.setblocking(False)

    def end(self) -> None:
        if self.exitcode is None:
            self.exitcode = -9
            assert self.held is not None
            self.held.close()
            os.close(self._end)

    def accepted(self) -> int:
        """Accept what waits, and say how many."""
        taken = 0
        assert self.held is not None
        with contextlib.suppress(BlockingIOError):
            while True:
                self.held.accept()[0].close()
                taken += 1
        return taken

    def join(self, timeout: float | None = None) -> None:
        pass

    def is_alive(self) -> bool:
        return self.exitcode is None

    terminate = kill = end


class _Stands:
    def __init__(self) -> None:
        self.started: list[_Stand] = []

    def Process(self, **given: Any) -> _Stand:
        stand = _Stand(**given)
        self.started.append(stand)
        return stand

    def wait_started(self, count: int, what: str) -> None:
        """Until `count` processes are made and each holds its socket: a process is listed
        when made, a moment before the group starts it."""
        wait_for(
            lambda: len(self.started) == count and all(s.held is not None for s in self.started),
            what,
        )


@contextlib.contextmanager
def _group(
    rebind: Callable[[], socket.socket] | None = None,
) -> Iterator[tuple[ProcessGroup, _Stands, int]]:
    first = bind("127.0.0.1", _free_port(), share_port=True)
    shared = SharedPort.of(first)
    port = first.getsockname()[1]
    group = ProcessGroup(
        ProcessPlan(Path("unread"), first, "", None, None, False, False, LogSettings()),
        2,
        listeners=[first, shared.bind()],
        rebind=rebind or shared.bind,
    )
    stands = _Stands()
    group._context = stands  # type: ignore[assignment]
    running = threading.Thread(target=group.run)
    running.start()
    try:
        stands.wait_started(2, "both processes started")
        yield group, stands, port
    finally:
        group.close()
        running.join()
        for stand in stands.started:
            stand.end()
            os.close(stand.sentinel)


def test_each_process_is_given_its_own_socket_and_this_one_keeps_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(serving_processes, "STEADY_SECONDS", 0.0)
    with _group() as (group, stands, port):
        first, second = stands.started
        assert first.held is not None
        assert second.held is not None
        assert first.held.getsockname() == second.held.getsockname() == ("127.0.0.1", port)
        assert all(listener.fileno() == -1 for listener in group.listeners)

        first.end()
        stands.wait_started(3, "the ended process started again")
        again = stands.started[2]
        assert again.index == 0
        assert again.held is not None
        assert again.held.getsockname() == ("127.0.0.1", port)
        assert again.plan.endpoint not in group.listeners
        assert again.plan.endpoint.fileno() == -1
        # The ended process's socket is gone: every connection lands on a living one.
        clients = [socket.create_connection(("127.0.0.1", port)) for _ in range(CONNECTIONS)]
        taken = 0

        def all_taken() -> bool:
            nonlocal taken
            taken += second.accepted() + again.accepted()
            return taken == CONNECTIONS

        try:
            wait_for(all_taken, "every connection taken by a living process")
        finally:
            for client in clients:
                client.close()


def test_a_port_that_cannot_be_bound_again_is_tried_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(serving_processes, "STEADY_SECONDS", 0.0)
    monkeypatch.setattr(serving_processes, "FIRST_PAUSE_SECONDS", 0.01)
    refusals = [ConfigurationError("taken", code=int(CommandCode.LISTEN_ADDRESS_UNAVAILABLE))]
    fresh: list[SharedPort] = []

    def rebind() -> socket.socket:
        if refusals:
            raise refusals.pop()
        return fresh[0].bind()

    with structlog.testing.capture_logs() as events, _group(rebind) as (group, stands, port):
        fresh.append(SharedPort(socket.AF_INET, socket.SOCK_STREAM, 0, ("127.0.0.1", port)))
        stands.started[1].end()
        stands.wait_started(3, "the ended process started again")
        replaced: object = group.slots[1].process
        assert replaced is stands.started[2]
    unbound = [e for e in events if e["event"] == "serve.process_unbound"]
    assert unbound == [
        {"event": "serve.process_unbound", "log_level": "error", "process": 1, "code": 11009}
    ]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
