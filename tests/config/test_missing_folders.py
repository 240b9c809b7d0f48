"""A folder the configuration names that its IMAP server does not have stops the commands that
would synchronize it, listing the server's folders so the owner can correct the name. Folder
names are the owner's: they are shown on the terminal, never logged."""

from __future__ import annotations

import mailbox
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from log_audit import register_all
from mailfathom.domain.config import FolderMapping
from servers.dovecot import DovecotServer, ImapAccount
from sync.helpers import imap_account_config, open_services

CONFIGURATION_ERROR = "11001"
EXIT_REFUSED = 2
COMMAND_DEADLINE = 60.0


def _config(root: Path, account: ImapAccount, env_name: str, *remotes: str) -> Path:
    folders = "".join(f'[[Accounts.Folders]]\nRemote = "{remote}"\n' for remote in remotes)
    path = root / "mailfathom.toml"
    path.write_text(
        f'[Store]\nDataDir = "{root / "data"}"\n\n'
        f'[[Accounts]]\nId = "work"\nKind = "imap"\n\n'
        f'[Accounts.Imap]\nHost = "{account.host}"\nPort = {account.port}\n'
        f'Username = "{account.username}"\nTls = "none"\nSecret = {{ Env = "{env_name}" }}\n\n'
        f"{folders}",
        "utf-8",
    )
    return path


def _run(
    root: Path, account: ImapAccount, env_name: str, *args: str
) -> subprocess.CompletedProcess[str]:
    """The command as a user runs it; one still running at the deadline started instead of
    refusing."""
    process = subprocess.Popen(
        [sys.executable, "-m", "mailfathom", *args, "--config", str(root / "mailfathom.toml")],
        cwd=root,
        env={**os.environ, env_name: account.password},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=COMMAND_DEADLINE)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        pytest.fail(f"`{args[0]}` was still running: it started instead of refusing")
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


@pytest.mark.parametrize(
    "command",
    [["sync"], ["sync", "--continuous"], ["accounts"], ["serve", "--stdio"]],
)
def test_a_folder_the_server_lacks_stops_the_command_listing_the_servers_folders(
    tmp_path: Path, dovecot: DovecotServer, imap_account: ImapAccount, command: list[str]
) -> None:
    suffix = uuid.uuid4().hex[:8]
    present = f"Archive-{suffix}"
    absent = f"Projects-{suffix}"
    register_all([present, absent])
    dovecot.create_folder(imap_account.username, present)
    env_name = f"MF_TEST_IMAP_{suffix.upper()}"
    _config(tmp_path, imap_account, env_name, "INBOX", absent)

    result = _run(tmp_path, imap_account, env_name, *command)

    assert result.returncode == EXIT_REFUSED, result.stderr
    assert CONFIGURATION_ERROR in result.stderr
    assert "'work'" in result.stderr
    assert f'"{absent}"' in result.stderr
    assert f'"{present}"' in result.stderr
    assert '"INBOX"' in result.stderr
    # Nothing was synchronized: the configured INBOX was not even started on.
    assert "INBOX:" not in result.stdout


def test_inbox_in_any_case_and_existing_folders_pass_the_check(
    tmp_path: Path, dovecot: DovecotServer, imap_account: ImapAccount
) -> None:
    suffix = uuid.uuid4().hex[:8]
    present = f"Archive-{suffix}"
    dovecot.create_folder(imap_account.username, present)
    env_name = f"MF_TEST_IMAP_{suffix.upper()}"
    _config(tmp_path, imap_account, env_name, "inbox", present)

    dovecot.save_message(
        imap_account.username,
        b"From: a@example.org\r\nSubject: s\r\nMessage-ID: <m@example.org>\r\n\r\nb\r\n",
    )

    result = _run(tmp_path, imap_account, env_name, "sync")
    assert result.returncode == 0, result.stderr

    listed = _run(tmp_path, imap_account, env_name, "accounts")
    assert listed.returncode == 0, listed.stderr
    inbox_row = next(line for line in listed.stdout.splitlines() if " inbox " in line)
    assert " 1 " in inbox_row  # the message in the server's INBOX was kept


def test_a_pass_logs_how_many_folders_are_absent_never_their_names(
    tmp_path: Path, dovecot: DovecotServer, imap_account: ImapAccount
) -> None:
    """A pass that meets an absent folder (one deleted after the start check) reports it to
    its caller and logs only the count; the log audit checks the name is not logged."""
    absent = f"Deleted-{uuid.uuid4().hex[:8]}"
    register_all([absent])
    account = imap_account_config(
        imap_account,
        folders=(FolderMapping("INBOX", "INBOX"), FolderMapping(absent, absent)),
    )
    with open_services(tmp_path, account) as services:
        result = services.account_synchronizer().run_once(account)
    assert result.missing_folders == (absent,)


def test_an_import_into_the_inbox_names_it_in_any_case(tmp_path: Path) -> None:
    old = mailbox.Maildir(tmp_path / "old-mail", create=True)
    old.add(b"From: a@example.org\r\nSubject: s\r\nMessage-ID: <i@example.org>\r\n\r\nb\r\n")
    old.close()
    config = tmp_path / "mailfathom.toml"
    config.write_text(
        f'[Store]\nDataDir = "{tmp_path / "data"}"\n'
        '[[Accounts]]\nId = "notes"\nKind = "local"\n[[Accounts.Folders]]\nRemote = "INBOX"\n',
        "utf-8",
    )
    result = subprocess.run(
        [
            *(sys.executable, "-m", "mailfathom", "import", str(tmp_path / "old-mail")),
            *("--account", "notes", "--folder", "inbox", "--config", str(config)),
        ],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=COMMAND_DEADLINE,
    )
    assert result.returncode == 0, result.stderr
