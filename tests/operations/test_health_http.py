"""`/livez` and `/readyz` of the real `mailfathom serve`, on its MCP listener and on its
operations listener: ready while the store answers, its schema is current and its content
store can be written; alive whatever the store does."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import httpx2
import pytest

from mailfathom.adapters.sql.migrate import NEWEST_REVISION
from servers.postgres import PostgresServer

from .served import Served, config_text, serve, status, wait_for

CHECKS = {"store", "schema", "content"}


def _ready(served: Served) -> bool:
    return all(status(base + "/readyz") == (200, {"status": "ready"}) for base in served.listeners)


def _failing(served: Served, expected: set[str]) -> bool:
    for base in served.listeners:
        code, body = status(base + "/readyz")
        if code != 503:
            return False
        # Which checks failed, by name, and nothing else: no error text, path or address.
        assert set(body) == {"status", "failing"}
        assert body["status"] == "not ready"
        assert set(body["failing"]) <= CHECKS
        if not expected <= set(body["failing"]):
            return False
    return True


def _alive(served: Served) -> None:
    for base in served.listeners:
        assert status(base + "/livez") == (200, {"status": "alive"})


@pytest.mark.postgres
def test_readiness_follows_the_database_while_liveness_stays(tmp_path: Path) -> None:
    with PostgresServer() as database:
        url = database.create_database("operations")

        def config(mcp_port: int, ops_port: int) -> str:
            store = f'DatabaseUrl = "{url}"'
            return config_text(tmp_path / "data", mcp_port, ops_port, store=store)

        with serve(tmp_path, config) as served:
            wait_for(lambda: _ready(served), "serve did not become ready")
            _alive(served)

            database.halt()
            wait_for(lambda: _failing(served, {"store"}), "readiness missed the outage")
            _alive(served)

            database.resume()
            wait_for(lambda: _ready(served), "readiness did not come back with the database")
            _alive(served)


def test_readiness_names_a_schema_of_another_version_and_a_missing_content_store(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    with serve(tmp_path, lambda mcp, ops: config_text(data, mcp, ops)) as served:
        wait_for(lambda: _ready(served), "serve did not become ready")
        database = sqlite3.connect(data / "mailfathom.sqlite3")
        try:
            with database:
                database.execute("UPDATE alembic_version SET version_num = 'newer_elsewhere'")
            wait_for(lambda: _failing(served, {"schema"}), "readiness missed the schema")
            _alive(served)
            with database:
                database.execute("UPDATE alembic_version SET version_num = ?", (NEWEST_REVISION,))
        finally:
            database.close()
        wait_for(lambda: _ready(served), "readiness did not come back with the schema")

        packs = data / "content" / "packs"
        packs.rename(packs.with_name("moved"))
        wait_for(lambda: _failing(served, {"content"}), "readiness missed the content store")
        _alive(served)
        packs.with_name("moved").rename(packs)
        wait_for(lambda: _ready(served), "readiness did not come back with the content store")


def test_health_keeps_the_host_rule_and_needs_no_key(tmp_path: Path) -> None:
    with serve(tmp_path, lambda mcp, ops: config_text(tmp_path / "data", mcp, ops)) as served:
        for base in served.listeners:
            port = httpx2.URL(base).port
            for path in ("/livez", "/readyz"):
                assert httpx2.get(base + path).status_code == 200
                rebound = {"Host": f"rebound.example:{port}"}
                assert httpx2.get(base + path, headers=rebound).status_code == 421
                foreign = {"Origin": "http://rebound.example"}
                assert httpx2.get(base + path, headers=foreign).status_code == 403
        # The operations listener serves metrics only to the scraper's key, as /mcp's does.
        ops = served.listeners[1]
        assert httpx2.get(ops + "/metrics").status_code == 401
        assert "mailfathom_process_role" in served.metrics(ops)
