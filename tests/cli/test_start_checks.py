"""Commands that would need a secret they cannot read refuse to start, naming the account and
the variable, never a secret's value."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from log_audit import register_all

MISSING = f"MF_TEST_UNSET_{uuid.uuid4().hex[:8].upper()}"
PRESENT = f"MF_TEST_SET_{uuid.uuid4().hex[:8].upper()}"
PRESENT_VALUE = "present-secret-" + uuid.uuid4().hex
# Only a bound for a command that started instead of refusing (it would run on); a refusing
# command exits within a few seconds, but on a loaded machine its start alone took over 30.
START_DEADLINE = 120.0


def _config(root: Path, *, smtp_env: str, imap_env: str, feed_sends: bool = False) -> Path:
    """`mail` sends through a submission server that is never reached; `feed` is an IMAP
    account that is never reached either: every check here must come before a connection.
    With `feed_sends`, `feed` sends too (to peer mailboxes only) and keeps its Sent copies
    on its IMAP server."""
    feed_delivery = (
        '\n[[Accounts.Folders]]\nRemote = "Sent"\nRole = "Sent"\n\n'
        '[Accounts.Delivery]\nEnabled = true\nAddress = "feed@example.org"\n'
        if feed_sends
        else ""
    )
    text = f"""
[Store]
DataDir = "{root / "data"}"

[[Accounts]]
Id = "mail"
Kind = "local"
Addresses = ["me@example.org"]

[[Accounts.Folders]]
Remote = "INBOX"
Role = "Inbox"

[Accounts.Delivery]
Enabled = true
Address = "me@example.org"

[Accounts.Delivery.Smtp]
Host = "127.0.0.1"
Port = 1
Tls = "none"
Username = "me"
Secret = {{ Env = "{smtp_env}" }}

[[Accounts]]
Id = "feed"
Kind = "imap"

[Accounts.Imap]
Host = "127.0.0.1"
Port = 1
Username = "feed"
Tls = "none"
Secret = {{ Env = "{imap_env}" }}

[[Accounts.Folders]]
Remote = "INBOX"
Role = "Inbox"
{feed_delivery}
[McpEndpoint]
Enabled = true
Listen = "127.0.0.1:1"

[[McpEndpoint.Callers]]
Name = "local"
Credential = "none"
"""
    path = root / "mailfathom.toml"
    path.write_text(text, "utf-8")
    return path


def _run_to_exit(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The command as a user runs it; one still running after the deadline started work
    it should have refused."""
    env = {k: v for k, v in os.environ.items() if k != MISSING}
    env[PRESENT] = PRESENT_VALUE
    process = subprocess.Popen(
        [sys.executable, "-m", "mailfathom", *args],
        cwd=root,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=START_DEADLINE)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        pytest.fail(f"`{' '.join(args[:1])}` was still running: it started instead of refusing")
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


@pytest.mark.parametrize(
    ("command", "account", "which"),
    [
        (["deliver", "--once"], "feed", "sent-copy"),
        (["serve"], "mail", "smtp"),
        (["serve", "--port", "0"], "feed", "imap"),
        (["serve", "--stdio"], "feed", "imap"),
        (["deliver"], "mail", "smtp"),
        (["deliver", "--once"], "mail", "smtp"),
        (["sync"], "feed", "imap"),
        (["sync", "--continuous"], "feed", "imap"),
    ],
)
def test_a_command_refuses_to_start_without_a_secret_it_needs(
    tmp_path: Path, command: list[str], account: str, which: str
) -> None:
    register_all([PRESENT_VALUE])
    config = _config(
        tmp_path,
        smtp_env=MISSING if which == "smtp" else PRESENT,
        imap_env=PRESENT if which == "smtp" else MISSING,
        feed_sends=which == "sent-copy",
    )
    result = _run_to_exit(tmp_path, *command, "--config", str(config))
    assert result.returncode == 2, result.stderr
    assert "11002" in result.stderr
    assert f"'{account}'" in result.stderr
    assert MISSING in result.stderr
    assert PRESENT_VALUE not in result.stderr + result.stdout
    assert result.stdout == ""


def test_serving_without_synchronization_does_not_need_the_imap_secret(tmp_path: Path) -> None:
    """`--no-sync --no-deliver` needs no secret at all."""
    config = _config(tmp_path, smtp_env=MISSING, imap_env=MISSING)
    result = _run_to_exit(
        tmp_path, "serve", "--no-sync", "--no-deliver", "--stdio", "--config", str(config)
    )
    # stdin is empty: the stdio server starts, reads end of input and stops.
    assert result.returncode == 0, result.stderr
    assert MISSING not in result.stderr


def test_serving_over_http_with_the_endpoint_off_starts_nothing(tmp_path: Path) -> None:
    config = tmp_path / "mailfathom.toml"
    config.write_text(
        f'[Store]\nDataDir = "{tmp_path / "data"}"\n\n'
        '[[Accounts]]\nId = "notes"\nKind = "local"\n'
        '[[Accounts.Folders]]\nRemote = "INBOX"\nRole = "Inbox"\n',
        "utf-8",
    )
    result = _run_to_exit(tmp_path, "serve", "--config", str(config))
    assert result.returncode == 2, result.stderr
    assert "11001" in result.stderr
    # Refused before the store was opened, so no synchronization or delivery ever began.
    assert not (tmp_path / "data").exists()


def test_serving_over_http_refuses_to_start_without_the_introspection_secret(
    tmp_path: Path,
) -> None:
    config = _config(tmp_path, smtp_env=PRESENT, imap_env=PRESENT)
    config.write_text(
        config.read_text("utf-8")
        + f"""
[McpEndpoint.OAuth]
Resource = "http://127.0.0.1:1/mcp"
AuthorizationServers = ["http://127.0.0.1:2"]
TokenValidation = "introspection"
IntrospectionClientId = "mailfathom"
IntrospectionClientSecret = {{ Env = "{MISSING}" }}
""",
        "utf-8",
    )
    result = _run_to_exit(tmp_path, "serve", "--no-sync", "--no-deliver", "--config", str(config))
    assert result.returncode == 2, result.stderr
    assert "11002" in result.stderr
    assert "McpEndpoint.OAuth.IntrospectionClientSecret" in result.stderr
    assert MISSING in result.stderr
    assert not (tmp_path / "data").exists()
