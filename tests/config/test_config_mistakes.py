"""Mistakes a new user makes in a configuration file, met through the command line: each is
reported with enough to fix it (where, and what was meant) and nothing of the file beyond that."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from mailfathom.adapters.config import ConfigurationProblems, load_config

CONFIGURATION_ERROR = 11001
EXIT_REFUSED = 2


def _cli(config: Path, *args: str, home: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if home is not None:
        env["HOME"] = str(home)
    return subprocess.run(
        [sys.executable, "-m", "mailfathom", *args, "--config", str(config)],
        cwd=config.parent,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def write_config(tmp_path: Path) -> Callable[[str], Path]:
    def write(text: str) -> Path:
        path = tmp_path / "mailfathom.toml"
        path.write_text(text, encoding="utf-8")
        return path

    return write


# --------------------------------------------------------------------------------------------
# TOML syntax errors


@pytest.mark.parametrize(
    ("text", "line", "column"),
    [
        ('[Store]\nDataDir = "state" private-words\n', 2, 19),
        ("[Store]\n[Store]\n", 2, 7),
        ('[Store]\nDataDir = "private\x01words"\n', 2, 19),
        ("[Sync]\nEnabled = ", 2, 11),
        ('[[Accounts]]\nId = "a"\n[Accounts.Imap]\n[Accounts.Imap]\n', 4, 15),
    ],
)
def test_a_syntax_error_names_the_file_line_column_and_reason(
    write_config: Callable[[str], Path], text: str, line: int, column: int
) -> None:
    path = write_config(text)
    with pytest.raises(ConfigurationProblems) as caught:
        load_config(path)
    assert caught.value.code == CONFIGURATION_ERROR
    assert caught.value.source == str(path)
    (syntax,) = caught.value.syntax_errors
    assert (syntax.line, syntax.column) == (line, column)
    assert syntax.reason  # the parser's reason, in words that quote nothing of the file

    result = _cli(path, "accounts")
    assert result.returncode == EXIT_REFUSED
    assert str(path) in result.stderr
    assert f"line {line}, column {column}" in result.stderr
    assert syntax.reason in result.stderr
    assert "private" not in result.stderr
    assert "Traceback" not in result.stderr


# --------------------------------------------------------------------------------------------
# Unknown keys


@pytest.mark.parametrize(
    ("text", "key_path", "meant"),
    [
        (
            '[[Accounts]]\nId = "a"\nKind = "imap"\n[Accounts.Imap]\nHots = "h"\n',
            "Accounts[0].Imap.Hots",
            "Host",
        ),
        ('[Store]\nDataDri = "state"\n', "Store.DataDri", "DataDir"),
        ("[Sycn]\nEnabled = true\n", "Sycn", "Sync"),
        ('[McpEndpoint]\nListn = "127.0.0.1:1"\n', "McpEndpoint.Listn", "Listen"),
        (
            '[[Accounts]]\nId = "a"\nKind = "local"\n[[Accounts.Folders]]\nRemote = "INBOX"\n'
            'Rol = "Inbox"\n',
            "Accounts[0].Folders[0].Rol",
            "Role",
        ),
    ],
)
def test_an_unknown_key_suggests_the_nearest_known_key(
    write_config: Callable[[str], Path], text: str, key_path: str, meant: str
) -> None:
    path = write_config(text)
    with pytest.raises(ConfigurationProblems) as caught:
        load_config(path)
    assert caught.value.code == CONFIGURATION_ERROR
    assert any(problem.startswith(f"{key_path}: ") for problem in caught.value.problems)
    assert caught.value.suggestions == {key_path: meant}

    result = _cli(path, "accounts")
    assert result.returncode == EXIT_REFUSED
    assert f"did you mean {meant}?" in result.stderr


def test_an_unknown_key_far_from_every_known_key_suggests_nothing(
    write_config: Callable[[str], Path],
) -> None:
    with pytest.raises(ConfigurationProblems) as caught:
        load_config(write_config('[Store]\nCompletelyDifferent = "x"\n'))
    assert len(caught.value.problems) == 1
    assert caught.value.suggestions == {}
