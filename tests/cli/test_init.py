"""`mailfathom init` run as a script runs it: without a terminal, against the test Dovecot
and the test submission server."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from log_audit import register_all
from mailfathom.adapters.config import load_config
from mailfathom.domain.api_keys import is_api_key_shaped
from mailfathom.domain.config import TlsMode
from mailfathom.domain.folders import FolderRole
from servers.dovecot import DovecotServer, ImapAccount
from servers.smtp import SmtpServer
from snippet_text import PrintedSnippets

SMTP_USER = "sender@example.org"
SMTP_PASSWORD = "smtp-secret-for-init"
SECRET_ENV = "MF_INIT_TEST_IMAP_PASSWORD"
SMTP_SECRET_ENV = "MF_INIT_TEST_SMTP_PASSWORD"


@pytest.fixture(scope="module")
def smtp() -> Iterator[SmtpServer]:
    server = SmtpServer({SMTP_USER: SMTP_PASSWORD}).start()
    yield server
    server.close()


def run_init(
    cwd: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mailfathom", "init", *args],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def imap_flags(account: ImapAccount, config: Path) -> list[str]:
    return [
        "--non-interactive",
        "--config", str(config),
        "--imap-host", account.host,
        "--imap-port", str(account.port),
        "--imap-security", "none",
        "--imap-user", account.username,
        "--imap-secret-env", SECRET_ENV,
    ]  # fmt: skip


def _one_coded_line(stderr: str, code: int) -> None:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith(f"MailFathom error {code}:")
    assert "Traceback" not in stderr


def test_init_writes_a_loadable_file_with_roles_the_server_announces(
    dovecot: DovecotServer, imap_account: ImapAccount, tmp_path: Path
) -> None:
    register_all([imap_account.password])
    for name in ("Sent", "Drafts", "Junk", "Trash", "Archive", "Projects"):
        dovecot.create_folder(imap_account.username, name)
    config = tmp_path / "mailfathom.toml"
    done = run_init(
        tmp_path, *imap_flags(imap_account, config), "--account-id", "work",
        env={SECRET_ENV: imap_account.password},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    loaded = load_config(config)
    (account,) = loaded.accounts
    assert account.account_id == "work"
    assert account.imap is not None
    assert account.imap.secret is not None
    assert account.imap.secret.env == SECRET_ENV
    assert account.imap.tls is TlsMode.NONE
    assert account.delivery is None
    roles = {f.remote_name: f.role for f in account.folders}
    assert roles == {
        "INBOX": FolderRole.INBOX,
        "Sent": FolderRole.SENT,
        "Drafts": FolderRole.DRAFTS,
        "Junk": FolderRole.JUNK,
        "Trash": FolderRole.TRASH,
        "Archive": FolderRole.ARCHIVE,
    }
    assert "announced (\\Sent)" in done.stdout
    assert "guessed" not in done.stdout
    # The key is printed once; the file holds its SHA-256 only, and never the password.
    snippets = PrintedSnippets.parse(done.stdout)
    _, headers = snippets.http_url_and_headers()
    key = headers["Authorization"].removeprefix("Bearer ")
    # Of the shape an endpoint accepting access tokens never sends to an identity provider.
    assert is_api_key_shaped(key)
    text = config.read_text("utf-8")
    assert key not in text
    assert imap_account.password not in text + done.stdout + done.stderr
    assert [c.api_key_sha256 for c in loaded.mcp.callers] == [
        hashlib.sha256(key.encode()).hexdigest()
    ]
    assert loaded.mcp.enabled


def test_init_guesses_roles_by_name_only_where_the_server_names_none(
    dovecot: DovecotServer, imap_account: ImapAccount, tmp_path: Path
) -> None:
    for name in ("Sent Items", "Spam", "Receipts"):
        dovecot.create_folder(imap_account.username, name)
    config = tmp_path / "mailfathom.toml"
    done = run_init(
        tmp_path, *imap_flags(imap_account, config), env={SECRET_ENV: imap_account.password}
    )
    assert done.returncode == 0, done.stderr
    roles = {f.remote_name: f.role for f in load_config(config).accounts[0].folders}
    assert roles == {
        "INBOX": FolderRole.INBOX,
        "Sent Items": FolderRole.SENT,
        "Spam": FolderRole.JUNK,
    }
    assert len(re.findall(r"guessed from its name", done.stdout)) == 2


def test_init_checks_the_submission_server_and_sends_nothing(
    imap_account: ImapAccount, smtp: SmtpServer, tmp_path: Path
) -> None:
    register_all([SMTP_PASSWORD])
    config = tmp_path / "mailfathom.toml"
    done = run_init(
        tmp_path, *imap_flags(imap_account, config),
        "--smtp-host", smtp.host, "--smtp-port", str(smtp.port), "--smtp-security", "starttls",
        "--smtp-user", SMTP_USER, "--smtp-secret-env", SMTP_SECRET_ENV,
        env={SECRET_ENV: imap_account.password, SMTP_SECRET_ENV: SMTP_PASSWORD,
             "SSL_CERT_FILE": str(smtp.ca_path)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    delivery = load_config(config).accounts[0].delivery
    assert delivery is not None
    assert delivery.enabled
    assert delivery.smtp is not None
    assert delivery.smtp.secret is not None
    assert delivery.smtp.secret.env == SMTP_SECRET_ENV
    assert delivery.smtp.tls is TlsMode.STARTTLS
    assert smtp.received() == []
    assert SMTP_PASSWORD not in config.read_text("utf-8") + done.stdout


def test_a_refused_submission_login_is_one_coded_line(
    imap_account: ImapAccount, smtp: SmtpServer, tmp_path: Path
) -> None:
    config = tmp_path / "mailfathom.toml"
    done = run_init(
        tmp_path, *imap_flags(imap_account, config),
        "--smtp-host", smtp.host, "--smtp-port", str(smtp.port), "--smtp-security", "starttls",
        "--smtp-user", SMTP_USER, "--smtp-secret-env", SMTP_SECRET_ENV,
        env={SECRET_ENV: imap_account.password, SMTP_SECRET_ENV: "not-the-password",
             "SSL_CERT_FILE": str(smtp.ca_path)},
    )  # fmt: skip
    _one_coded_line(done.stderr, 72002)
    assert "not-the-password" not in done.stdout + done.stderr
    assert not config.exists()


def test_init_refuses_to_replace_an_existing_file(tmp_path: Path) -> None:
    config = tmp_path / "mailfathom.toml"
    config.write_text("# kept as it is\n", "utf-8")
    done = run_init(
        tmp_path, "--non-interactive", "--config", str(config), "--imap-host", "127.0.0.1",
        "--imap-user", "someone", "--imap-secret-env", SECRET_ENV,
    )  # fmt: skip
    assert done.returncode != 0
    _one_coded_line(done.stderr, 11004)
    assert config.read_text("utf-8") == "# kept as it is\n"


def test_a_wrong_password_is_one_coded_line_and_writes_nothing(
    imap_account: ImapAccount, tmp_path: Path
) -> None:
    config = tmp_path / "mailfathom.toml"
    done = run_init(
        tmp_path, *imap_flags(imap_account, config), env={SECRET_ENV: "wrong-password-given"}
    )
    assert done.returncode != 0
    _one_coded_line(done.stderr, 31002)
    assert "wrong-password-given" not in done.stdout + done.stderr
    assert not config.exists()


def test_an_unreachable_server_is_one_coded_line(tmp_path: Path) -> None:
    config = tmp_path / "mailfathom.toml"
    unreachable = ImapAccount("127.0.0.1", _closed_port(), "someone", "unused")
    done = run_init(tmp_path, *imap_flags(unreachable, config), env={SECRET_ENV: "unused"})
    assert done.returncode != 0
    _one_coded_line(done.stderr, 31001)
    assert not config.exists()


def test_without_a_terminal_a_missing_value_stops_at_once(tmp_path: Path) -> None:
    # No --non-interactive: standard input is not a terminal, so nothing is asked.
    done = run_init(tmp_path, "--config", str(tmp_path / "mailfathom.toml"))
    assert done.returncode != 0
    _one_coded_line(done.stderr, 11005)
    assert "--imap-host" in done.stderr


def _closed_port() -> int:
    from servers._common import free_port

    return free_port()
