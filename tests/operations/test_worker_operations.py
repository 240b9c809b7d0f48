"""A `mailfathom worker` answers liveness, readiness and its own metrics on the operations
listener `--ops-listen` names, and publishes the roles it runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mcp_tests.deployment import _free_port, _wait_for_port

from .served import DEADLINE, Served, config_text, status, wait_for

ACCOUNT = """
[[Accounts]]
Id = "home"
Kind = "local"
[[Accounts.Folders]]
Remote = "INBOX"
Role = "Inbox"
"""


@pytest.mark.process
def test_a_worker_serves_its_health_and_its_metrics(
    tmp_path: Path, migrated_postgres_url: str
) -> None:
    """Workers share a PostgreSQL store (a synchronizing one refuses SQLite)."""
    store = f'DatabaseUrl = "{migrated_postgres_url}"'
    text = config_text(tmp_path / "data", _free_port(), _free_port(), store=store)
    config = tmp_path / "mailfathom.toml"
    config.write_text(text + ACCOUNT)
    ops_port = _free_port()
    argv = [sys.executable, "-m", "mailfathom", "worker", "--role", "sync", "--config", str(config)]
    argv += ["--ops-listen", f"127.0.0.1:{ops_port}"]
    log = tmp_path / "worker.log"
    with log.open("wb") as out:
        process = subprocess.Popen(argv, stdout=out, stderr=out)
    try:
        _wait_for_port(ops_port, process)
        base = f"http://127.0.0.1:{ops_port}"
        assert status(base + "/livez") == (200, {"status": "alive"})
        wait_for(lambda: status(base + "/readyz") == (200, {"status": "ready"}), "not ready")
        served = Served(process, 0, ops_port, log)
        exposition = served.metrics(base)
        assert 'mailfathom_process_role{role="sync"} 1.0' in exposition
        counted = 'mailfathom_sync_passes_total{account="home"}'
        wait_for(lambda: counted in served.metrics(base), "no pass counted")
    finally:
        process.terminate()
        try:
            process.wait(timeout=DEADLINE)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
