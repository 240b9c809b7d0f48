"""The owner's console served on a loopback port, for the browser to sign in to.

A process of its own (`console_main.py`): the console's application over a deployment of a
local account (no mail server to reach) in an SQLite store, with an owner password set.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from log_audit import register
from mcp_tests.deployment import _free_port, _wait_for_port

MAIN = Path(__file__).resolve().parent / "console_main.py"
TESTS = MAIN.parent.parent


@dataclass(frozen=True)
class Console:
    origin: str
    password: str
    root: Path

    def url(self, path: str) -> str:
        return self.origin + path


@contextmanager
def served_console(root: Path) -> Iterator[Console]:
    """A console with an owner password set, until the block ends."""
    password = "owner-" + uuid.uuid4().hex
    register(password)
    root.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    environment = {**os.environ, "PYTHONPATH": str(TESTS)}
    with (root / "console.log").open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, str(MAIN), str(root), str(port)],
            env=environment,
            cwd=root,
            stdin=subprocess.PIPE,
            stdout=log,
            stderr=log,
        )
    assert process.stdin is not None
    process.stdin.write((password + "\n").encode())
    process.stdin.close()
    try:
        _wait_for_port(port, process)
        yield Console(f"http://127.0.0.1:{port}", password, root)
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
