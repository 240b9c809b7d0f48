"""One version number: the installed package's, shown by both console scripts."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest

import mailfathom

PROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def _declared() -> str:
    declared: str = tomllib.loads(PROJECT.read_text("utf-8"))["project"]["version"]
    return declared


def test_the_package_reports_the_version_it_was_installed_with() -> None:
    assert version("mailfathom") == _declared()
    assert mailfathom.__version__ == _declared()


@pytest.mark.parametrize("script", ["mailfathom", "mfctl"])
def test_each_console_script_prints_the_version(script: str) -> None:
    executable = Path(sys.executable).with_name(script)
    done = subprocess.run(
        [str(executable), "--version"], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["mailfathom", _declared()]


def test_the_module_prints_the_version() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mailfathom", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["mailfathom", _declared()]
