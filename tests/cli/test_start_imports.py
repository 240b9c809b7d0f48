"""Every command and every started worker pays for what the command line imports before it
runs: `--help` and a plain command load no library that only some commands use."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cli.operator_cli import local_config

# What only some commands use: passkeys in the console (webauthn), the sensitive-content
# screen (detect_secrets), vectors (numpy), vCard exchange (vobject), the chat endpoint
# (openai), DKIM verification (dkim, dnspython), the MCP server (mcp, uvicorn).
ONLY_SOME_COMMANDS = (
    "webauthn",
    "detect_secrets",
    "numpy",
    "vobject",
    "openai",
    "dkim",
    "dns",
    "mcp",
    "uvicorn",
)
# A plain command opens the store; `--help` opens nothing.
STORE = ("sqlalchemy", "alembic")

DRIVER = """
import atexit, json, sys

out = sys.argv[1]
atexit.register(lambda: open(out, "w").write(json.dumps(sorted(sys.modules))))
sys.argv = ["mailfathom", *sys.argv[2:]]
from mailfathom.entrypoints.cli.main import main

main()
"""


def _loaded(tmp_path: Path, *args: str) -> set[str]:
    out = tmp_path / "modules.json"
    finished = subprocess.run(
        [sys.executable, "-c", DRIVER, str(out), *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert finished.returncode == 0, finished.stderr
    return {name.split(".")[0] for name in json.loads(out.read_text("utf-8"))}


@pytest.mark.parametrize(
    ("args", "absent"),
    [
        (("--help",), ONLY_SOME_COMMANDS),
        (("accounts", "--config", "{config}"), ONLY_SOME_COMMANDS),
    ],
    ids=["help", "accounts"],
)
def test_a_command_loads_only_the_libraries_it_uses(
    tmp_path: Path, args: tuple[str, ...], absent: tuple[str, ...]
) -> None:
    config = local_config(tmp_path)
    loaded = _loaded(tmp_path, *(a.format(config=config) for a in args))
    assert "typer" in loaded
    assert sorted(loaded.intersection(absent)) == []
    # The plain command really opened the store, so it loaded what that takes and no more.
    if args[0] == "accounts":
        assert set(STORE) <= loaded
