"""`mailfathom init` against a Dovecot laid out as Gmail publishes a mailbox: the roles come
from SPECIAL-USE, the labels are kept, and the three views (All Mail, Important, Starred) are
left out of the mapping, with the reason said and the entry that keeps one written down."""

from __future__ import annotations

import subprocess
import tomllib
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from mailfathom.adapters.config import load_config
from mailfathom.domain.folders import FolderRole
from servers.dovecot import DovecotServer, ImapAccount
from servers.gmail_layout import ALL_MAIL, LABEL, SENT_MAIL, file_letters, gmail_dovecot, letter

from .test_init import SECRET_ENV, imap_flags, run_init

pytestmark = pytest.mark.dovecot


@pytest.fixture(scope="module")
def gmail() -> Iterator[DovecotServer]:
    yield from gmail_dovecot()


@pytest.fixture
def gmail_account(gmail: DovecotServer) -> ImapAccount:
    suffix = uuid.uuid4().hex[:10]
    account = gmail.add_user(f"gmail-{suffix}", f"pw-{suffix}")
    file_letters(gmail, account.username, [letter("Budget review", ["INBOX", LABEL])])
    return account


@pytest.fixture
def initialized(
    gmail_account: ImapAccount, tmp_path: Path
) -> tuple[Path, subprocess.CompletedProcess[str]]:
    config = tmp_path / "mailfathom.toml"
    done = run_init(
        tmp_path, *imap_flags(gmail_account, config), env={SECRET_ENV: gmail_account.password}
    )
    assert done.returncode == 0, done.stderr
    return config, done


def test_init_keeps_inbox_roles_and_labels_and_leaves_the_views_out(
    initialized: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    config, done = initialized
    (account,) = load_config(config).accounts
    assert [(f.remote_name, f.role, f.visible_to_tools) for f in account.folders] == [
        ("INBOX", FolderRole.INBOX, True),
        ("[Gmail]/Trash", FolderRole.TRASH, True),
        ("[Gmail]/Spam", FolderRole.JUNK, True),
        (SENT_MAIL, FolderRole.SENT, True),
        ("[Gmail]/Drafts", FolderRole.DRAFTS, True),
        (LABEL, None, True),
    ]
    assert f"  {LABEL}: a label, synchronized" in done.stdout
    assert "announced (\\Sent)" in done.stdout
    assert "Not synchronized: these folders show messages that are in other folders" in (
        done.stdout
    )
    for view, attribute in (
        (ALL_MAIL, "\\All"),
        ("[Gmail]/Important", "\\Important"),
        ("[Gmail]/Starred", "\\Flagged"),
    ):
        assert f"  {view} ({attribute})" in done.stdout
    assert f"Mail archived without any label is in {ALL_MAIL} alone." in done.stdout


def test_the_entry_that_keeps_all_mail_is_in_the_file_one_edit_away(
    initialized: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    config, _ = initialized
    text = config.read_text("utf-8")
    commented = [line for line in text.splitlines() if line.startswith("#   ")]
    entry = [line.removeprefix("#   ") for line in commented if line.startswith("#   [[")]
    entry += [line.removeprefix("#   ") for line in commented if " = " in line]
    assert entry == ["[[Accounts.Folders]]", f'Remote = "{ALL_MAIL}"', 'Role = "All"']
    config.write_text(text + "\n" + "\n".join(entry) + "\n", "utf-8")
    assert tomllib.loads(config.read_text("utf-8"))["Accounts"][0]["Folders"][-1] == {
        "Remote": ALL_MAIL,
        "Role": "All",
    }
    (account,) = load_config(config).accounts
    assert account.folders[-1].remote_name == ALL_MAIL
    assert account.folders[-1].role is FolderRole.ALL
