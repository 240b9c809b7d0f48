"""A refused Host or Origin value is never written to the log: a fixed placeholder is."""

from __future__ import annotations

import uuid
from pathlib import Path

import httpx2

import log_audit
from mailfathom.entrypoints.mcp.sdk_logs import REFUSED_VALUE
from mcp_tests.deployment import KEYS
from mcp_tests.hardened import ACCEPT, METRICS_KEY, Served
from waiting import wait_for


def _bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def _wait_for(path: Path, needle: str, count: int) -> str:
    def logged() -> str | None:
        text = path.read_text("utf-8", "replace") if path.exists() else ""
        return text if text.count(needle) >= count else None

    return wait_for(logged, "the refusal was not logged", timeout=20)


def test_a_refused_host_or_origin_is_logged_as_a_placeholder(bounded_server: Served) -> None:
    marker = uuid.uuid4().hex
    hostile_host = f"rebind-{marker}.attacker.example"
    hostile_origin = f"http://origin-{marker}.attacker.example"
    log_audit.register(hostile_host, hostile_origin, marker)
    port = httpx2.URL(bounded_server.url).port
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {**_bearer(KEYS["full"]), "Accept": ACCEPT}
    with httpx2.Client(timeout=30) as http:
        as_host = {**headers, "Host": f"{hostile_host}:{port}"}
        assert http.post(bounded_server.url, json=body, headers=as_host).status_code == 421
        as_origin = {**headers, "Origin": hostile_origin}
        assert http.post(bounded_server.url, json=body, headers=as_origin).status_code == 403
        metrics_host = {**_bearer(METRICS_KEY), "Host": f"{hostile_host}:{port}"}
        assert http.get(bounded_server.metrics_url, headers=metrics_host).status_code == 421
    log = _wait_for(bounded_server.log, REFUSED_VALUE, 3)
    copy = log_audit.copy_path()
    assert copy is not None
    for text in (log, copy.read_text("utf-8", "replace")):
        assert marker not in text
