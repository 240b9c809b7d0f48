"""The client configurations a command prints work when pasted: each is read back from the
printed text, handed to the official MCP Inspector as that client's file or command line,
and must list the tools of the running endpoint."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from mailfathom.entrypoints.cli.client_snippets import program_command
from mcp_inspector import Inspector, install
from mcp_tests.deployment import _free_port, _wait_for_port
from snippet_text import PrintedSnippets


@dataclass(frozen=True)
class ServedDemo:
    printed: str
    snippets: PrintedSnippets
    root: Path


@pytest.fixture(scope="module")
def inspector() -> Inspector:
    return install()


@pytest.fixture(scope="module")
def served_demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedDemo]:
    root = tmp_path_factory.mktemp("snippets")
    port = _free_port()
    # A narrow terminal: nothing printed may be folded into a line that no longer pastes.
    env = {**os.environ, "COLUMNS": "40"}
    demo = subprocess.run(
        [sys.executable, "-m", "mailfathom", "demo", "--no-serve", "--data-dir",
         str(root / "demo"), "--messages", "10", "--port", str(port)],
        capture_output=True, text=True, timeout=300, env=env, cwd=root, check=False,
    )  # fmt: skip
    assert demo.returncode == 0, demo.stderr[-2000:]
    config = root / "demo" / "mailfathom.toml"
    with (root / "serve.log").open("wb") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "mailfathom", "serve", "--config", str(config), "--no-sync",
             "--no-deliver"],
            stdout=log, stderr=log, cwd=root,
        )  # fmt: skip
    try:
        _wait_for_port(port, server)
        yield ServedDemo(demo.stdout, PrintedSnippets.parse(demo.stdout), root)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)


def _tool_names(answer: object) -> set[str]:
    assert isinstance(answer, dict), answer
    return {tool["name"] for tool in answer["tools"]}


def _listed_from_config(
    inspector: Inspector, document: dict[str, object], name: str, cwd: Path
) -> set[str]:
    path = cwd / f"{name}.json"
    path.write_text(json.dumps(document), "utf-8")
    servers = document["mcpServers"]
    assert isinstance(servers, dict)
    (server,) = servers
    status, answer, errors = inspector.run(
        ["--config", str(path), "--server", server, "--method", "tools/list"], cwd
    )
    assert status == 0, errors
    return _tool_names(answer)


def test_the_http_configuration_is_read_by_the_inspector(
    inspector: Inspector, served_demo: ServedDemo, tmp_path: Path
) -> None:
    listed = _listed_from_config(inspector, served_demo.snippets.http, "http", tmp_path)
    assert {"list_accounts", "list_emails", "send_email"} <= listed


def test_the_vscode_configuration_holds_the_entry_the_inspector_reads(
    inspector: Inspector, served_demo: ServedDemo, tmp_path: Path
) -> None:
    # VS Code's file keeps its entries under `servers`; the Inspector's importer for VS Code
    # reads that key where other clients read `mcpServers`, and the entries themselves alike.
    servers = served_demo.snippets.vscode["servers"]
    (entry,) = servers.values()
    assert entry["type"] == "http"
    listed = _listed_from_config(inspector, {"mcpServers": servers}, "vscode", tmp_path)
    assert "list_emails" in listed


def test_the_claude_command_line_reaches_the_endpoint(
    inspector: Inspector, served_demo: ServedDemo, tmp_path: Path
) -> None:
    url, header = served_demo.snippets.claude_url_and_header()
    status, answer, errors = inspector.run(
        [url, "--transport", "http", "--header", header, "--method", "tools/list"], tmp_path
    )
    assert status == 0, errors
    assert "list_emails" in _tool_names(answer)


def test_the_stdio_configuration_starts_this_program_by_its_absolute_path(
    inspector: Inspector, served_demo: ServedDemo, tmp_path: Path
) -> None:
    (entry,) = served_demo.snippets.stdio["mcpServers"].values()
    assert Path(entry["command"]).is_absolute()
    assert entry["args"][-4:] == [
        "serve",
        "--stdio",
        "--config",
        str(served_demo.root / "demo" / "mailfathom.toml"),
    ]
    listed = _listed_from_config(inspector, served_demo.snippets.stdio, "stdio", tmp_path)
    assert "list_emails" in listed


def test_the_http_snippets_carry_the_printed_key_and_endpoint(served_demo: ServedDemo) -> None:
    key = (served_demo.root / "demo" / "demo-api-key").read_text("ascii").strip()
    url, headers = served_demo.snippets.http_url_and_headers()
    assert headers == {"Authorization": f"Bearer {key}"}
    assert served_demo.snippets.claude_url_and_header() == (url, f"Authorization: Bearer {key}")
    assert f"MCP endpoint: {url}" in served_demo.printed


def test_the_program_is_named_by_the_entry_point_beside_the_interpreter(tmp_path: Path) -> None:
    interpreter = tmp_path / "env" / "bin" / "python"
    script = interpreter.with_name("mailfathom")
    assert program_command(str(interpreter), lambda path, mode: path == str(script)) == (
        str(script),
        [],
    )
    assert program_command(str(interpreter), lambda path, mode: False) == (
        str(interpreter),
        ["-m", "mailfathom"],
    )
