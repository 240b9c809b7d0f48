"""What `serve` says when it starts, and how it refuses an address it cannot listen on: one
line with a code and a non-zero exit, never a traceback. Output goes to pipes here (as under
systemd or CI); tests/cli/test_terminal_output.py runs the same commands on a terminal."""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client

from mailfathom.domain.codes import CommandCode
from mcp_tests.client import over_stdio, tool_names
from mcp_tests.deployment import _free_port, _wait_for_port

from .operator_cli import START_LINE, command, local_config, one_error_line, run_to_exit


def _start_lines(text: str) -> list[dict[str, str]]:
    return [m.groupdict() for m in map(START_LINE.match, text.splitlines()) if m]


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@pytest.mark.parametrize("categories", [None, ["mailbox"]])
def test_serve_prints_one_start_line_with_what_it_serves(
    tmp_path: Path, categories: list[str] | None
) -> None:
    port = _free_port()
    published = "" if categories is None else f"PublishedToolCategories = {categories!r}"
    config = local_config(tmp_path, listen=f"127.0.0.1:{port}", endpoint=published)
    out = tmp_path / "serve.out"
    with out.open("wb") as sink:
        process = subprocess.Popen(
            command("serve", "--config", str(config)),
            stdout=sink,
            stderr=sink,
            stdin=subprocess.DEVNULL,
        )
    try:
        _wait_for_port(port, process)
        listed = tool_names(f"http://127.0.0.1:{port}/mcp", None)
    finally:
        _stop(process)
    (line,) = _start_lines(out.read_text("utf-8"))
    assert line["url"] == f"http://127.0.0.1:{port}/mcp"
    assert int(line["callers"]) == 2
    # The open loopback caller holds every permission: it is served every published tool.
    assert int(line["tools"]) == len(listed)
    if categories is not None:
        assert "send_email" not in listed


def test_serve_over_stdio_prints_its_start_line_on_standard_error(tmp_path: Path) -> None:
    config = local_config(tmp_path)
    errlog = tmp_path / "stdio.err"

    async def work(client: Client) -> list[str]:
        return [t.name for t in (await client.list_tools()).tools]

    listed = over_stdio(config, dict(os.environ), work, errlog)
    (line,) = _start_lines(errlog.read_text("utf-8"))
    assert line["url"] is None
    assert (int(line["callers"]), int(line["tools"])) == (2, len(listed))


@pytest.fixture
def taken_port() -> Iterator[int]:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        yield int(held.getsockname()[1])


@pytest.mark.parametrize("by_flag", [True, False])
def test_a_port_in_use_is_one_line_with_a_code(
    tmp_path: Path, taken_port: int, by_flag: bool
) -> None:
    listen = "127.0.0.1:1" if by_flag else f"127.0.0.1:{taken_port}"
    config = local_config(tmp_path, listen=listen)
    flags = ["--port", str(taken_port)] if by_flag else []
    result = run_to_exit(tmp_path, "serve", "--config", str(config), *flags)
    one_error_line(result, CommandCode.LISTEN_ADDRESS_UNAVAILABLE)
    # Refused before anything started: no start line, and no worker logged a pass.
    assert not _start_lines(result.stdout + result.stderr)
    assert "serve.started" not in result.stderr


@pytest.mark.parametrize("port", ["0", "65536", "70000"])
def test_a_port_out_of_range_is_one_line_with_a_code(tmp_path: Path, port: str) -> None:
    config = local_config(tmp_path)
    result = run_to_exit(tmp_path, "serve", "--config", str(config), "--port", port)
    one_error_line(result, CommandCode.LISTEN_PORT_OUT_OF_RANGE)


def test_a_host_that_does_not_resolve_is_one_line_with_a_code(tmp_path: Path) -> None:
    config = local_config(tmp_path, listen="host-that-does-not-exist.invalid:8625")
    result = run_to_exit(tmp_path, "serve", "--config", str(config))
    one_error_line(result, CommandCode.LISTEN_HOST_NOT_RESOLVED)


def test_quiet_serve_prints_nothing_but_errors(tmp_path: Path, taken_port: int) -> None:
    port = _free_port()
    config = local_config(tmp_path, listen=f"127.0.0.1:{port}")
    out = tmp_path / "serve.out"
    with out.open("wb") as sink:
        process = subprocess.Popen(
            command("--quiet", "serve", "--config", str(config)),
            stdout=sink,
            stderr=sink,
            stdin=subprocess.DEVNULL,
        )
    try:
        _wait_for_port(port, process)
        # Serving answers, and nothing was printed on the way there.
        tool_names(f"http://127.0.0.1:{port}/mcp", None)
    finally:
        _stop(process)
    assert out.read_text("utf-8") == ""
    refused = run_to_exit(
        tmp_path, "--quiet", "serve", "--config", str(config), "--port", str(taken_port)
    )
    one_error_line(refused, CommandCode.LISTEN_ADDRESS_UNAVAILABLE)
    assert refused.stdout == ""
