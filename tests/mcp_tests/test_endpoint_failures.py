"""A request to the MCP listener whose handling fails is answered 500 and logged by code and
kind alone: left to the server, the failure would be logged with its traceback, and an
error's text may carry what the request was about."""

from __future__ import annotations

import dataclasses
import hashlib
import logging
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from prometheus_client.registry import Collector

from mailfathom.domain.access import ALL_PERMISSIONS, Caller
from mailfathom.entrypoints.mcp.assemble import ToolBundles, build_server_from
from mcp_tests.in_process import InProcess, in_process, one_reader_config, served_in_thread

MARK = "what-the-request-was-about-" + "f" * 12
METRICS_KEY = "metrics-key-of-this-test"


class _Failing(Collector):
    def collect(self) -> Iterator[object]:  # type: ignore[override]
        raise RuntimeError(MARK)


def _config(root: Path) -> str:
    return one_reader_config(root, "0" * 64)


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcess]:
    root = tmp_path_factory.mktemp("failures")
    with in_process(root, _config(root)) as opened:
        yield opened


def test_a_failed_request_is_answered_500_and_its_text_is_never_logged(
    deployment: InProcess, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    digest = hashlib.sha256(METRICS_KEY.encode()).hexdigest()
    config = dataclasses.replace(deployment.services.config.mcp, metrics_api_key_sha256=digest)
    server = build_server_from(
        ToolBundles.of(deployment.services), config, Caller(ALL_PERMISSIONS, "everything")
    )
    server.telemetry.registry.register(_Failing())
    caplog.set_level(logging.DEBUG)
    with served_in_thread(server, config) as url:
        answer = httpx2.get(
            url.removesuffix("/mcp") + "/metrics",
            headers={"Authorization": f"Bearer {METRICS_KEY}"},
        )
    assert answer.status_code == 500
    assert MARK not in answer.text
    out, err = capfd.readouterr()
    logged = caplog.text + out + err
    assert MARK not in logged
    assert "Traceback" not in logged
    assert "54001" in logged
