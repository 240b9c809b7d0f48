"""`--log-level`, `MAILFATHOM_LOG_LEVEL` and `--quiet` with output going to pipes (as under
systemd or CI): log lines stay JSON on standard error, at the level asked for."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mailfathom.domain.codes import CommandCode

from .operator_cli import local_config, one_error_line, run_to_exit


def _events(stderr: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]


def _levels(stderr: str) -> set[object]:
    return {event["level"] for event in _events(stderr)}


def test_without_a_terminal_logs_stay_json_lines_on_standard_error(tmp_path: Path) -> None:
    config = local_config(tmp_path)
    result = run_to_exit(tmp_path, "sync", "--config", str(config))
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines
    assert "folder.synchronized" in [json.loads(line)["event"] for line in lines]
    assert not (tmp_path / "data" / "mailfathom.log").exists()


@pytest.mark.parametrize("how", ["flag", "environment"])
def test_a_log_level_keeps_what_is_below_it_out(tmp_path: Path, how: str) -> None:
    config = local_config(tmp_path)
    if how == "flag":
        result = run_to_exit(tmp_path, "--log-level", "Warning", "sync", "--config", str(config))
    else:
        result = run_to_exit(
            tmp_path, "sync", "--config", str(config), env={"MAILFATHOM_LOG_LEVEL": "warning"}
        )
    assert result.returncode == 0, result.stderr
    assert _levels(result.stderr) <= {"warning", "error", "critical"}
    assert "folder.synchronized" not in result.stderr


def test_the_flag_wins_over_the_environment(tmp_path: Path) -> None:
    config = local_config(tmp_path)
    result = run_to_exit(
        tmp_path,
        "--log-level",
        "info",
        "sync",
        "--config",
        str(config),
        env={"MAILFATHOM_LOG_LEVEL": "error"},
    )
    assert result.returncode == 0, result.stderr
    assert "info" in _levels(result.stderr)


@pytest.mark.parametrize("how", ["flag", "environment"])
def test_an_unknown_log_level_is_one_line_with_a_code(tmp_path: Path, how: str) -> None:
    config = local_config(tmp_path)
    if how == "flag":
        result = run_to_exit(tmp_path, "--log-level", "loud", "sync", "--config", str(config))
    else:
        result = run_to_exit(
            tmp_path, "sync", "--config", str(config), env={"MAILFATHOM_LOG_LEVEL": "loud"}
        )
    one_error_line(result, CommandCode.LOG_LEVEL_NOT_KNOWN)
    assert not (tmp_path / "data").exists()


def test_quiet_prints_no_progress_and_no_banner(tmp_path: Path) -> None:
    config = local_config(tmp_path)
    loud = run_to_exit(tmp_path, "sync", "--config", str(config))
    assert loud.stdout.strip()
    quiet = run_to_exit(tmp_path, "--quiet", "sync", "--config", str(config))
    assert quiet.returncode == 0, quiet.stderr
    assert (quiet.stdout, quiet.stderr) == ("", "")
    demo = run_to_exit(
        tmp_path, "--quiet", "demo", "--no-serve", "--messages", "5", "--data-dir", "demo"
    )
    assert demo.returncode == 0, demo.stderr
    assert (demo.stdout, demo.stderr) == ("", "")
    assert (tmp_path / "demo" / "data" / "mailfathom.sqlite3").is_file()


def test_quiet_still_says_what_went_wrong(tmp_path: Path) -> None:
    result = run_to_exit(tmp_path, "--quiet", "sync", "--config", str(tmp_path / "absent.toml"))
    one_error_line(result, 11001)
