"""The systemd units and the container recipe name only commands and flags the CLI has, and
only endpoints a process serves; systemd itself accepts the units."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import typer.main

from mailfathom.domain.config import DEFAULT_MCP_PORT
from mailfathom.entrypoints.cli.main import app
from mailfathom.entrypoints.health import LIVEZ_PATH, READYZ_PATH

ROOT = Path(__file__).resolve().parents[2]
UNITS = sorted((ROOT / "deploy" / "systemd").glob("*.service"))
RECIPE = ROOT / "Containerfile"
DEPLOYMENT = ROOT / "docs" / "deployment.md"
BINARY = "/usr/local/bin/mailfathom"


def _unknown(argv: list[str]) -> list[str]:
    """What in `argv` (after the program's name) the CLI has no command or option for."""
    command: Any = typer.main.get_command(app)
    unknown: list[str] = []
    words = iter(argv)
    for word in words:
        if hasattr(command, "list_commands") and not word.startswith("-"):
            if word not in command.list_commands(None):
                return [*unknown, word]
            command = command.commands[word]
            continue
        if not word.startswith("-"):
            continue
        name = word.split("=")[0]
        option = next((p for p in command.params if name in (*p.opts, *p.secondary_opts)), None)
        if option is None:
            unknown.append(word)
        elif not getattr(option, "is_flag", True) and "=" not in word:
            next(words, None)
    return unknown


def _exec_lines(unit: Path) -> list[list[str]]:
    lines = re.findall(r"^Exec\w*=(.+)$", unit.read_text("utf-8"), re.M)
    return [shlex.split(line.replace("%i", "sync")) for line in lines]


def _invocations() -> dict[str, list[list[str]]]:
    """Every command line the units, the recipe and the guide give, after the program's
    name, by where it is written."""
    found: dict[str, list[list[str]]] = {}
    for unit in UNITS:
        lines = _exec_lines(unit)
        assert all(argv[0] == BINARY for argv in lines), unit.name
        found[unit.name] = [argv[1:] for argv in lines]
    text = RECIPE.read_text("utf-8")
    (entrypoint,) = re.findall(r"^ENTRYPOINT (\[.*\])$", text, re.M)
    assert json.loads(entrypoint) == ["mailfathom"]
    commands = re.findall(r"^(?:#\s+)?CMD (\[.*\])$", text, re.M)
    found[RECIPE.name] = [json.loads(command) for command in commands]
    guide = re.findall(r"^\s*mailfathom (.+?)(?:\s*\\)?$", DEPLOYMENT.read_text("utf-8"), re.M)
    found[DEPLOYMENT.name] = [shlex.split(line) for line in guide]
    return found


def test_the_units_recipe_and_guide_run_only_commands_and_flags_of_the_cli() -> None:
    assert {u.name for u in UNITS} == {"mailfathom.service", "mailfathom-worker@.service"}
    invocations = _invocations()
    assert ["serve", "--config", "/etc/mailfathom/mailfathom.toml"] in invocations[RECIPE.name]
    for where, lines in invocations.items():
        for argv in lines:
            if argv[0] != "worker":
                assert _unknown(argv) == [], (where, argv)


def test_every_worker_invocation_names_the_worker_command_and_its_flags() -> None:
    workers = [argv for lines in _invocations().values() for argv in lines if argv[0] == "worker"]
    assert len(workers) >= 3
    for argv in workers:
        assert _unknown(argv) == [], argv


def test_the_recipe_checks_liveness_as_an_unprivileged_user() -> None:
    text = RECIPE.read_text("utf-8")
    assert f"MAILFATHOM_HEALTH_URL=http://127.0.0.1:{DEFAULT_MCP_PORT}{LIVEZ_PATH}" in text
    assert re.search(r"^HEALTHCHECK .*\n.*MAILFATHOM_HEALTH_URL", text, re.M)
    assert re.search(r"^USER mailfathom$", text, re.M)


def test_the_guide_names_only_endpoints_that_exist() -> None:
    named = set(re.findall(r"`(/[a-z]+z)`", DEPLOYMENT.read_text("utf-8")))
    assert named == {LIVEZ_PATH, READYZ_PATH}


def test_the_checker_finds_an_unknown_command_and_flag() -> None:
    assert _unknown(["serve", "--no-such-flag", "--config", "x"]) == ["--no-such-flag"]
    assert _unknown(["no-such-command"]) == ["no-such-command"]
    assert _unknown(["serve", "--ops-listen", "127.0.0.1:9464", "--no-sync"]) == []


def test_systemd_accepts_the_units(tmp_path: Path) -> None:
    """`systemd-analyze verify` on the units as installed, with the program at the path of
    this checkout's `mailfathom` (verify wants the executable to exist). It exits 0 even for
    an unknown setting, which it only reports: nothing may be reported."""
    program = shutil.which("mailfathom") or str(Path(sys.executable).with_name("mailfathom"))
    for unit in UNITS:
        text = unit.read_text("utf-8").replace(BINARY, program)
        (tmp_path / unit.name).write_text(text, "utf-8")
    names = [unit.name.replace("@.", "@sync.") for unit in UNITS]
    result = subprocess.run(
        ["systemd-analyze", "verify", "--man=no", *(f"./{name}" for name in names)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert (result.returncode, result.stdout + result.stderr) == (0, "")
