"""`mailfathom serve` started for the operations tests: its MCP listener and its operations
listener (`[Operations] Listen`) on ports of their own, and what they answer."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx2

from mcp_tests.deployment import _free_port, _wait_for_port

METRICS_KEY = "key-scraper-" + uuid.uuid4().hex
DEADLINE = 60.0
T = TypeVar("T")


def config_text(data: Path, mcp_port: int, ops_port: int, *, store: str = "") -> str:
    digest = hashlib.sha256(METRICS_KEY.encode()).hexdigest()
    return f"""
[Store]
DataDir = "{data}"
{store}

[McpEndpoint]
Enabled = true
Listen = "127.0.0.1:{mcp_port}"
MetricsApiKeySha256 = "{digest}"

[[McpEndpoint.Callers]]
Name = "local"
Credential = "none"

[Operations]
Listen = "127.0.0.1:{ops_port}"
"""


@dataclass
class Served:
    process: subprocess.Popen[bytes]
    mcp_port: int
    ops_port: int
    log: Path

    @property
    def listeners(self) -> tuple[str, str]:
        """The MCP listener's base address and the operations listener's."""
        return f"http://127.0.0.1:{self.mcp_port}", f"http://127.0.0.1:{self.ops_port}"

    def metrics(self, base: str) -> str:
        answer = httpx2.get(base + "/metrics", headers={"Authorization": f"Bearer {METRICS_KEY}"})
        assert answer.status_code == 200
        return answer.text


def status(url: str) -> tuple[int, dict[str, Any]]:
    answer = httpx2.get(url, timeout=30.0)
    return answer.status_code, json.loads(answer.text)


def wait_for(condition: Callable[[], T], what: str, timeout: float = DEADLINE) -> T:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, what
        time.sleep(0.2)


@contextlib.contextmanager
def serve(
    root: Path,
    make_config: Callable[[int, int], str],
    env: dict[str, str] | None = None,
) -> Iterator[Served]:
    """Serve the configuration `make_config(mcp_port, ops_port)` writes until the block ends."""
    mcp_port, ops_port = _free_port(), _free_port()
    config = root / "mailfathom.toml"
    config.write_text(make_config(mcp_port, ops_port), "utf-8")
    log = root / "serve.log"
    argv = [sys.executable, "-m", "mailfathom", "serve", "--config", str(config)]
    with log.open("wb") as out:
        process = subprocess.Popen(argv, env={**os.environ, **(env or {})}, stdout=out, stderr=out)
    try:
        _wait_for_port(mcp_port, process)
        _wait_for_port(ops_port, process)
        yield Served(process, mcp_port, ops_port, log)
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=DEADLINE)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
