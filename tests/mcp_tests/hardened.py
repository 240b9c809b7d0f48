"""More servers over the shared deployment's store, each with its own session bounds, and raw
HTTP helpers for the handshake protocol generation (the official client closes its session on
exit, so a test that must hold sessions open speaks HTTP itself)."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx2
import pytest

from mcp_tests.deployment import Deployment, _free_port, _wait_for_port

HANDSHAKE_VERSION = "2025-06-18"
ACCEPT = "application/json, text/event-stream"


@dataclass(frozen=True)
class Served:
    url: str
    log: Path

    @property
    def metrics_url(self) -> str:
        return self.url.removesuffix("/mcp") + "/metrics"


@contextmanager
def serve_with(base: Deployment, endpoint_keys: str) -> Iterator[Served]:
    """`mailfathom serve` over `base`'s store, with `endpoint_keys` added to `[McpEndpoint]`
    (and `/metrics` only where they name its key)."""
    lines = base.config_path.read_text("utf-8").splitlines(keepends=True)
    text = "".join(line for line in lines if not line.startswith("MetricsApiKeySha256"))
    anchor = 'Listen = "127.0.0.1:8625"\n'
    assert anchor in text
    with serve_text(base, text.replace(anchor, anchor + endpoint_keys.strip() + "\n")) as served:
        yield served


@contextmanager
def serve_text(base: Deployment, text: str, port: int | None = None) -> Iterator[Served]:
    """`mailfathom serve` of the configuration `text` (over `base`'s store), on `port` (a
    free one when None)."""
    root = base.config_path.parent / f"served-{uuid.uuid4().hex[:8]}"
    root.mkdir()
    config_path = root / "mailfathom.toml"
    config_path.write_text(text, "utf-8")
    port = port if port is not None else _free_port()
    log_path = root / "server.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "mailfathom", "serve", "--no-deliver",
             "--config", str(config_path), "--port", str(port)],
            env=base.env,
            stdout=log,
            stderr=log,
        )  # fmt: skip
    try:
        _wait_for_port(port, process)
        yield Served(f"http://127.0.0.1:{port}/mcp", log_path)
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _headers(key: str, session: str | None = None) -> dict[str, str]:
    headers = {"Authorization": f"Bearer {key}", "Accept": ACCEPT}
    if session is not None:
        headers["Mcp-Session-Id"] = session
        headers["Mcp-Protocol-Version"] = HANDSHAKE_VERSION
    return headers


def initialize_body() -> dict[str, object]:
    """The JSON-RPC `initialize` request of the handshake generation."""
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": HANDSHAKE_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "session-probe", "version": "1"},
        },
    }


def initialize(http: httpx2.Client, url: str, key: str) -> httpx2.Response:
    """An `initialize` request of the handshake generation, opening a session when admitted."""
    return http.post(url, json=initialize_body(), headers=_headers(key))


def open_session(http: httpx2.Client, url: str, key: str) -> str:
    """A new, initialized session's id."""
    opened = initialize(http, url, key)
    assert opened.status_code == 200
    session = opened.headers["mcp-session-id"]
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert http.post(url, json=note, headers=_headers(key, session)).status_code == 202
    return session


def list_tools(http: httpx2.Client, url: str, key: str, session: str) -> httpx2.Response:
    body = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
    return http.post(url, json=body, headers=_headers(key, session))


def close_session(http: httpx2.Client, url: str, key: str, session: str) -> int:
    return http.delete(url, headers=_headers(key, session)).status_code


METRICS_KEY = "key-metrics-" + uuid.uuid4().hex
BOUNDED_SESSIONS = 3


@pytest.fixture(scope="session")
def bounded_server(mcp_deployment: Deployment) -> Iterator[Served]:
    """Three sessions per caller entry, a long idle period, and `/metrics` behind its key."""
    digest = hashlib.sha256(METRICS_KEY.encode()).hexdigest()
    keys = f"""
SessionsPerCaller = {BOUNDED_SESSIONS}
SessionIdleSeconds = 600
MetricsApiKeySha256 = "{digest}"
"""
    with serve_with(mcp_deployment, keys) as served:
        yield served


@pytest.fixture(scope="session")
def short_idle_server(mcp_deployment: Deployment) -> Iterator[Served]:
    """One session per caller entry, closed after a second without a request."""
    with serve_with(mcp_deployment, "SessionsPerCaller = 1\nSessionIdleSeconds = 1") as served:
        yield served
