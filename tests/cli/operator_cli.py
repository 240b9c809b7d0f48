"""Running commands as an operator does: a small local deployment, the command's output, and
the start line `serve` prints."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

EXIT_DEADLINE = 60.0
START_LINE = re.compile(
    r"^Serving MCP (?:at (?P<url>\S+) over Streamable HTTP|on stdio): "
    r"(?P<callers>\d+) caller\(s\) configured, (?P<tools>\d+) tool\(s\) published"
)
KEY_DIGEST = "0" * 64


def local_config(
    root: Path,
    *,
    listen: str = "127.0.0.1:1",
    data_dir: Path | None = None,
    store: str = "",
    endpoint: str = "",
) -> Path:
    """One local account (nothing to connect to, no secret), the endpoint on `listen` with an
    open loopback caller and a keyed one."""
    credential = (
        '[[McpEndpoint.Callers]]\nName = "local"\nCredential = "none"\n\n'
        if listen.startswith("127.")
        else ""
    )
    text = f"""
[Store]
DataDir = "{data_dir or root / "data"}"
{store}

[[Accounts]]
Id = "notes"
Kind = "local"
PollIntervalSeconds = 1

[[Accounts.Folders]]
Remote = "INBOX"
Role = "Inbox"

[McpEndpoint]
Enabled = true
Listen = "{listen}"
{endpoint}

{credential}[[McpEndpoint.Callers]]
Name = "keyed"
Credential = "apiKey"
ApiKeySha256 = "{KEY_DIGEST}"
"""
    path = root / "mailfathom.toml"
    path.write_text(text, "utf-8")
    return path


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "mailfathom", *args]


@dataclass(frozen=True)
class Finished:
    returncode: int
    stdout: str
    stderr: str


def run_to_exit(root: Path, *args: str, env: dict[str, str] | None = None) -> Finished:
    """The command with pipes for its output (not a terminal); one still running after the
    deadline did not fail the way it should have."""
    process = subprocess.Popen(
        command(*args),
        cwd=root,
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=EXIT_DEADLINE)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        pytest.fail(f"`{args[0]}` was still running after {EXIT_DEADLINE:g} s")
    return Finished(process.returncode, stdout, stderr)


def one_error_line(result: Finished, code: int) -> None:
    """The command failed with exit status 2 and said so on exactly one line, with its code."""
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert f"error {code}:" in lines[0]
    assert "Traceback" not in result.stderr + result.stdout
