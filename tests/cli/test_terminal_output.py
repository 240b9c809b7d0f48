"""`serve` and the demo on a terminal (a pseudo-terminal, as an operator's shell gives them):
log lines go to a file in the data directory, named once, and never into the banner, the
progress bars or the start line. Asking for a log level brings them back to the terminal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from log_audit import register_headers
from mailfathom.adapters.local.sample_mail import generate_mailbox
from mcp_tests.deployment import _free_port
from waiting import wait_for

from .operator_cli import START_LINE, command, local_config
from .pseudo_terminal import DEADLINE, on_terminal

_LOG_FILE_NAME = "mailfathom.log"


def _has_start_line(text: str) -> bool:
    return any(START_LINE.match(line.strip()) for line in text.splitlines())


def _logged_events(path: Path) -> list[str]:
    if not path.exists():
        return []
    return [json.loads(line)["event"] for line in path.read_text("utf-8").splitlines()]


def _assert_no_log_line(text: str) -> None:
    for line in text.splitlines():
        assert '"event"' not in line
        assert '"level"' not in line
        assert "serve.started" not in line
        assert "folder.synchronized" not in line


def _shown_once(text: str, log_file: Path) -> int:
    """The index of the one line naming the log file."""
    naming = [i for i, line in enumerate(text.splitlines()) if str(log_file) in line]
    assert len(naming) == 1, text
    return naming[0]


def test_serve_on_a_terminal_logs_to_a_file_it_names_once(tmp_path: Path) -> None:
    port = _free_port()
    config = local_config(tmp_path, listen=f"127.0.0.1:{port}")
    log_file = tmp_path / "data" / _LOG_FILE_NAME
    with on_terminal(command("serve", "--config", str(config)), tmp_path) as terminal:
        terminal.read_until(_has_start_line, "the start line was not shown")
        wait_for(
            lambda: {"serve.started", "folder.synchronized"} <= set(_logged_events(log_file)),
            "the log file did not receive the serving process's lines",
            timeout=DEADLINE,
        )
    shown = terminal.text
    _assert_no_log_line(shown)
    lines = shown.splitlines()
    named = _shown_once(shown, log_file)
    started = next(i for i, line in enumerate(lines) if START_LINE.match(line.strip()))
    assert named < started
    assert "serve.stopped" in _logged_events(log_file)


def test_the_demo_banner_on_a_terminal_holds_no_log_line(tmp_path: Path) -> None:
    for sample in generate_mailbox(10):
        register_headers(sample.raw)
    port = _free_port()
    home = tmp_path / "demo"
    log_file = home / "data" / _LOG_FILE_NAME
    argv = command("demo", "--data-dir", str(home), "--messages", "10", "--port", str(port))
    with on_terminal(argv, tmp_path) as terminal:
        terminal.read_until(_has_start_line, "the demo did not reach its start line")
        # The workers started after the banner: synchronization of both accounts, delivery.
        wait_for(
            lambda: (
                {"serve.started", "delivery.started", "folder.synchronized"}
                <= set(_logged_events(log_file))
            ),
            "the demo's workers logged nothing to the log file",
            timeout=DEADLINE,
        )
    shown = terminal.text
    _assert_no_log_line(shown)
    named = _shown_once(shown, log_file)
    lines = shown.splitlines()
    key_line = next(i for i, line in enumerate(lines) if line.startswith("API key:"))
    started = next(i for i, line in enumerate(lines) if START_LINE.match(line.strip()))
    assert named < key_line < started


@pytest.mark.parametrize("how", ["flag", "environment"])
def test_asking_for_a_log_level_on_a_terminal_logs_there(tmp_path: Path, how: str) -> None:
    port = _free_port()
    config = local_config(tmp_path, listen=f"127.0.0.1:{port}")
    argv = command("serve", "--config", str(config))
    env: dict[str, str] = {}
    if how == "flag":
        argv = command("--log-level", "info", "serve", "--config", str(config))
    else:
        env["MAILFATHOM_LOG_LEVEL"] = "INFO"
    with on_terminal(argv, tmp_path, **env) as terminal:
        terminal.read_until(
            lambda text: _has_start_line(text) and "serve.started" in text,
            "the start line and the first log line were not shown",
        )
    shown = terminal.text
    assert not (tmp_path / "data" / _LOG_FILE_NAME).exists()
    assert _LOG_FILE_NAME not in shown
    # Readable lines for a person, not JSON.
    (line,) = [x for x in shown.splitlines() if "serve.started" in x]
    assert not line.lstrip().startswith("{")
