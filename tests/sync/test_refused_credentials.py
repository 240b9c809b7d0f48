"""A continuous synchronization whose IMAP login the server refuses does not end the
account's run in silence: the account's health says so (31002), nothing asks the server
again while the secret is the one it refused (a server may lock a mailbox out after a few
refused logins), and a new secret written to the file resumes the run without a restart."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

import pytest
import structlog

from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.adapters.sql.sync_failures import SqlSyncFailures
from mailfathom.bootstrap import Services
from mailfathom.domain.account_health import HealthState
from mailfathom.domain.config import SecretRef, SyncMode
from servers.dovecot import DovecotServer, ImapAccount
from waiting import wait_for

from .helpers import RemoteMailbox, imap_account_config, open_services, sample, stored_rows


@pytest.mark.parametrize("mode", [SyncMode.PUSH, SyncMode.POLLING])
def test_refused_credentials_hold_the_account_until_its_secret_changes(
    tmp_path: Path,
    imap_account: ImapAccount,
    database_url: str | None,
    mode: SyncMode,
) -> None:
    password_file = tmp_path / "imap.password"
    password_file.write_text("not-the-password\n", "utf-8")
    base = imap_account_config(imap_account, sync_mode=mode, poll_interval_seconds=0.3)
    assert base.imap is not None
    account = replace(
        base, imap=replace(base.imap, secret=SecretRef(file=password_file, origin="Accounts[0]"))
    )
    remote = RemoteMailbox(imap_account)
    try:
        remote.append(sample("Waiting for the right password"))
    finally:
        remote.close()
    with (
        open_services(tmp_path, account, database_url) as services,
        structlog.testing.capture_logs() as logs,
    ):
        stop = threading.Event()
        worker = threading.Thread(
            target=services.account_synchronizer().run_forever, args=(account, stop), daemon=True
        )
        worker.start()
        try:
            health = wait_for(services.account_health, "the account's health to say so")
            assert [(h.account_id, h.state, h.code) for h in health] == [
                (account.account_id, HealthState.CREDENTIALS_REFUSED, 31002)
            ]
            wait_for(
                lambda: any(e["event"] == "account.credentials_refused" for e in logs),
                "the refusal to be logged",
            )
            failures = SqlSyncFailures(services.engine)
            assert [(f.account_id, f.folder_id, f.code) for f in failures.failures()] == [
                (account.account_id, None, 31002)
            ]
            refusals = sum(e["event"] == "account.credentials_refused" for e in logs)
            # Several polling intervals later the run still waits, without asking again.
            stop.wait(1.5)
            assert worker.is_alive()
            assert sum(e["event"] == "account.credentials_refused" for e in logs) == refusals
            password_file.write_text(imap_account.password + "\n", "utf-8")
            wait_for(
                lambda: len(stored_rows(services, account.account_id)) == 1,
                "the account to resume with its new secret",
            )
            wait_for(lambda: services.account_health() == [], "the health to clear")
            wait_for(lambda: failures.failures() == [], "the pass to clear the failure")
        finally:
            stop.set()
            worker.join(timeout=60)
        assert not worker.is_alive()


def test_a_refused_login_is_shown_by_mfctl_accounts(
    tmp_path: Path, imap_account: ImapAccount
) -> None:
    mfctl, password_file = _imap_commands(tmp_path, imap_account, "not-the-password")
    assert "MailFathom error 31002:" in mfctl("sync").stderr
    listed = mfctl("accounts")
    assert listed.returncode == 2
    assert "mail: login refused (31002) since" in listed.stdout
    assert "MailFathom error 31002:" in listed.stderr
    password_file.write_text(imap_account.password + "\n", "utf-8")
    assert mfctl("sync").returncode == 0
    listed = mfctl("accounts")
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert "refused" not in listed.stdout


def test_a_folder_gone_from_the_server_is_shown_by_mfctl_accounts(
    tmp_path: Path, imap_account: ImapAccount, dovecot: DovecotServer
) -> None:
    """The code a folder's last pass stopped on is shown beside it, and cleared by a pass
    that finds the folder again."""
    dovecot.create_folder(imap_account.username, "Projects")
    mfctl, _ = _imap_commands(tmp_path, imap_account, imap_account.password, ["Projects"])
    config = tmp_path / "mailfathom.toml"

    def projects_row() -> str:
        listed = mfctl("accounts")
        (row,) = [line for line in listed.stdout.splitlines() if "Projects" in line]
        return row

    assert mfctl("sync").returncode == 0
    assert "31006" not in projects_row()
    dovecot.doveadm("mailbox", "delete", "-u", imap_account.username, "Projects")
    # `mfctl sync` refuses to start while a mapped folder is missing; a continuous run's
    # pass (as `serve` makes) records the folder's code.
    with Services.open(load_config(config)) as services:
        (account,) = services.config.accounts
        services.account_synchronizer().run_once(account)
    assert "31006" in projects_row()
    dovecot.create_folder(imap_account.username, "Projects")
    assert mfctl("sync").returncode == 0
    assert "31006" not in projects_row()


def _imap_commands(
    root: Path, account: ImapAccount, password: str, folders: Sequence[str] = ()
) -> tuple[Callable[..., subprocess.CompletedProcess[str]], Path]:
    """A configuration for `account` logging in with `password` (kept in a file) and mapping
    INBOX and `folders`: a runner of the command line against it, and the password's file."""
    password_file = root / "imap.password"
    password_file.write_text(password + "\n", "utf-8")
    config = root / "mailfathom.toml"
    mapped = "".join(f'[[Accounts.Folders]]\nRemote = "{name}"\n' for name in folders)
    config.write_text(
        f"""
[Store]
DataDir = "{root / "data"}"

[[Accounts]]
Id = "mail"
Kind = "imap"
[Accounts.Imap]
Host = "{account.host}"
Port = {account.port}
Username = "{account.username}"
Tls = "none"
Secret = {{ File = "{password_file}" }}
[[Accounts.Folders]]
Remote = "INBOX"
Role = "Inbox"
{mapped}""",
        "utf-8",
    )

    def mfctl(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "mailfathom", *args, "--config", str(config)],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )

    return mfctl, password_file
