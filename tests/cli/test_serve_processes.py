"""`serve --processes N`: N processes answering on one address over PostgreSQL, the
background work in the first of them only, a process that dies started again, and stopping
the command stopping them all. On SQLite, and over stdio, more than one is refused."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mailfathom.domain.codes import CommandCode
from mcp_tests.client import call, structured, tool_names
from mcp_tests.deployment import _free_port, _wait_for_port

from .operator_cli import command, local_config, one_error_line, run_to_exit

# Each serving process starts a fresh interpreter and imports the MCP stack: on a busy
# two-core machine that alone has taken over a minute.
DEADLINE = 300.0
# The single-exchange generation: each request stands alone, so any process answers it. A
# session of the handshake generation lives in the process that opened it (docs/operations.md).
MODE = "2026-07-28"
SECRET_ENV = "MAILFATHOM_TEST_STATE_SECRET"
# Connections opened together: each lands on a process by a hash of its addresses, so all
# of them in one of two processes is a chance of 2**-23.
CLIENTS = 24
REPLICAS = f'Replicas = true\nStateSecret = {{ Env = "{SECRET_ENV}" }}'


def _serving_children(parent: int) -> list[int]:
    """The serving processes `parent` started (not multiprocessing's resource tracker)."""
    found = []
    listed = Path(f"/proc/{parent}/task/{parent}/children").read_text().split()
    for pid in map(int, listed):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except FileNotFoundError:
            continue
        if b"spawn_main" in cmdline:
            found.append(pid)
    return sorted(found)


def _sockets(pid: int, port: int, state: str) -> list[int]:
    """The TCP sockets on local `port` in `state` (the kernel's code: "01" established, "0A"
    listening) that process `pid` holds open, each as its receive queue: for a listening
    socket, the connections waiting to be accepted."""
    held = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(FileNotFoundError):
            target = os.readlink(fd)
            if target.startswith("socket:["):
                held.add(target.removeprefix("socket:[").removesuffix("]"))
    found = []
    for table in ("tcp", "tcp6"):
        for row in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            local, row_state, queues, inode = (row.split()[i] for i in (1, 3, 4, 9))
            if row_state == state and int(local.rsplit(":", 1)[1], 16) == port and inode in held:
                found.append(int(queues.split(":")[1], 16))
    return found


def _taken(pids: list[int], port: int) -> int:
    return sum(len(_sockets(pid, port, "01")) for pid in pids)


def _events(log: Path, name: str) -> list[dict[str, object]]:
    found = []
    for line in log.read_text("utf-8", "replace").splitlines():
        if line.startswith("{"):
            event = json.loads(line)
            if event.get("event") == name:
                found.append(event)
    return found


def _until(check: object, what: str) -> None:
    deadline = time.monotonic() + DEADLINE
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        time.sleep(0.2)


@contextlib.contextmanager
def _serving_two(
    tmp_path: Path, postgres_url: str
) -> Iterator[tuple[subprocess.Popen[bytes], int, Path]]:
    """`serve --processes 2` on PostgreSQL, until both processes serve."""
    port = _free_port()
    config = local_config(
        tmp_path,
        listen=f"127.0.0.1:{port}",
        store=f'DatabaseUrl = "{postgres_url}"',
        endpoint=REPLICAS,
    )
    log = tmp_path / "serve.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            command("serve", "--config", str(config), "--processes", "2"),
            stdout=sink,
            stderr=sink,
            stdin=subprocess.DEVNULL,
            env={**os.environ, SECRET_ENV: "s" * 48},
        )
    try:
        _wait_for_port(port, process, timeout=DEADLINE)
        _until(lambda: len(_events(log, "serve.started")) == 2, "two processes serving")
        _until(
            lambda: all(_sockets(p, port, "0A") for p in _serving_children(process.pid)),
            "every process listening",
        )
        yield process, port, log
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_connections_opened_together_are_spread_over_the_processes(
    tmp_path: Path, postgres_url: str
) -> None:
    """Keep-alive clients connecting at once land in every process, not all in the first
    one woken. The burst is made exact by pausing both processes while it connects, then
    letting the first take what it can before the second runs."""
    with _serving_two(tmp_path, postgres_url) as (process, port, _):
        children = _serving_children(process.pid)
        assert len(children) == 2
        clients: list[socket.socket] = []
        try:
            for pid in children:
                os.kill(pid, signal.SIGSTOP)
            clients = [socket.create_connection(("127.0.0.1", port)) for _ in range(CLIENTS)]
            os.kill(children[0], signal.SIGCONT)
            _until(
                lambda: not sum(_sockets(children[0], port, "0A")),
                "the first process taking what waits for it",
            )
            os.kill(children[1], signal.SIGCONT)
            _until(lambda: _taken(children, port) == CLIENTS, "every connection taken")
            held = {pid: len(_sockets(pid, port, "01")) for pid in children}
            assert all(held.values()), held
        finally:
            for pid in children:
                os.kill(pid, signal.SIGCONT)
            for client in clients:
                client.close()


def test_processes_share_one_address_run_the_work_once_and_come_back(
    tmp_path: Path, postgres_url: str
) -> None:
    with _serving_two(tmp_path, postgres_url) as (process, port, log):
        url = f"http://127.0.0.1:{port}/mcp"
        first = _serving_children(process.pid)
        assert len(first) == 2
        started = _events(log, "serve.started")
        # Synchronization runs in one process of the two.
        assert sorted(len(e["synchronizing"]) for e in started) == [0, 1]  # type: ignore[arg-type]
        for _ in range(6):
            assert "list_emails" in tool_names(url, None, mode=MODE)
            listed = structured(call(url, None, "list_accounts", mode=MODE))
            assert "notes" in json.dumps(listed)

        os.kill(first[0], signal.SIGKILL)
        # Once it has ended (its socket with it), the others take every new connection while
        # it is started again.
        _until(lambda: _events(log, "serve.process_ended"), "the end of the process noticed")
        for _ in range(6):
            assert "list_emails" in tool_names(url, None, mode=MODE)
        _until(lambda: _events(log, "serve.process_restarted"), "the dead process restarted")
        _until(lambda: len(_events(log, "serve.started")) == 3, "the new process serving")
        again = _serving_children(process.pid)
        assert len(again) == 2
        assert first[0] not in again
        assert set(first[1:]) <= set(again)
        (ended,) = _events(log, "serve.process_ended")
        (restarted,) = _events(log, "serve.process_restarted")
        assert ended["exit_status"] == restarted["exit_status"] == -signal.SIGKILL
        assert "list_emails" in tool_names(url, None, mode=MODE)

        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=DEADLINE) == 0
        for pid in again:
            assert not Path(f"/proc/{pid}").exists() or _is_zombie(pid)


def _is_zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


@pytest.mark.parametrize("asked", ["option", "configuration"])
def test_more_than_one_process_on_sqlite_is_refused(tmp_path: Path, asked: str) -> None:
    port = _free_port()
    endpoint = "Processes = 2" if asked == "configuration" else ""
    config = local_config(tmp_path, listen=f"127.0.0.1:{port}", endpoint=endpoint)
    extra = ["--processes", "2"] if asked == "option" else []
    result = run_to_exit(tmp_path, "serve", "--config", str(config), *extra)
    one_error_line(result, CommandCode.PROCESSES_NEED_POSTGRESQL)
    assert "PostgreSQL" in result.stderr


def test_more_than_one_process_without_shared_state_is_refused(tmp_path: Path) -> None:
    """Sessions and questions waiting for a person would live in one process only."""
    unreachable = 'DatabaseUrl = "postgresql+psycopg://nobody@127.0.0.1:1/none"'
    config = local_config(tmp_path, listen=f"127.0.0.1:{_free_port()}", store=unreachable)
    result = run_to_exit(tmp_path, "serve", "--config", str(config), "--processes", "2")
    one_error_line(result, CommandCode.PROCESSES_NEED_REPLICAS)
    assert "Replicas" in result.stderr


def test_more_than_one_process_over_stdio_is_refused(tmp_path: Path) -> None:
    config = local_config(tmp_path)
    result = run_to_exit(tmp_path, "serve", "--stdio", "--config", str(config), "--processes", "2")
    one_error_line(result, CommandCode.PROCESSES_OVER_STDIO)
