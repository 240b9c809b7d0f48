"""Mistakes a new user makes in a configuration file, met through the command line: each is
reported with enough to fix it (where, and what was meant) and nothing of the file beyond that."""

from __future__ import annotations

import mailbox
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


# --------------------------------------------------------------------------------------------
# Paths under the home directory


def test_a_tilde_expands_to_the_home_directory_in_every_path(
    tmp_path: Path, write_config: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    path = write_config(
        '[Store]\nDataDir = "~/mail-state"\nDatabaseUrl = "sqlite:///~/mail.db"\n'
        '[[Accounts]]\nId = "work"\nKind = "imap"\n'
        '[Accounts.Imap]\nHost = "imap.example.org"\nUsername = "me"\n'
        'Secret = { File = "~/secrets/imap" }\n'
        '[Accounts.Delivery]\nEnabled = true\nAddress = "me@example.org"\n'
        '[Accounts.Delivery.Smtp]\nHost = "smtp.example.org"\nUsername = "me"\n'
        'Secret = { File = "~/secrets/smtp" }\n'
    )
    config = load_config(path)
    assert config.store.data_dir == home / "mail-state"
    assert config.store.database_url == f"sqlite:///{home / 'mail.db'}"
    (account,) = config.accounts
    assert account.imap is not None
    assert account.imap.secret is not None
    assert account.imap.secret.file == home / "secrets" / "imap"
    assert account.delivery is not None
    assert account.delivery.smtp is not None
    assert account.delivery.smtp.secret is not None
    assert account.delivery.smtp.secret.file == home / "secrets" / "smtp"


def test_a_tilde_with_a_user_name_expands_to_that_users_home(
    write_config: Callable[[str], Path],
) -> None:
    import pwd

    entry = pwd.getpwuid(os.getuid())
    path = write_config(f'[Store]\nDataDir = "~{entry.pw_name}/mail-state"\n')
    assert load_config(path).store.data_dir == Path(entry.pw_dir) / "mail-state"


def test_a_tilde_naming_an_unknown_user_is_refused_without_the_name(
    write_config: Callable[[str], Path],
) -> None:
    with pytest.raises(ConfigurationProblems) as caught:
        load_config(write_config('[Store]\nDataDir = "~nosuchuser-private/state"\n'))
    assert caught.value.code == CONFIGURATION_ERROR
    (problem,) = caught.value.problems
    assert problem.startswith("Store.DataDir: ")
    assert "nosuchuser-private" not in str(caught.value)


def test_the_cli_creates_the_store_under_the_home_directory(
    tmp_path: Path, write_config: Callable[[str], Path]
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    path = write_config('[Store]\nDataDir = "~/mail-state"\n')
    result = _cli(path, "migrate", home=home)
    assert result.returncode == 0, result.stderr
    assert (home / "mail-state").is_dir()
    assert not (tmp_path / "~").exists()


def test_a_configuration_named_under_the_home_directory_is_found(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "mailfathom.toml").write_text('[Store]\nDataDir = "~/mail-state"\n', "utf-8")
    env = {**os.environ, "HOME": str(home), "MAILFATHOM_CONFIG": "~/mailfathom.toml"}
    result = subprocess.run(
        [sys.executable, "-m", "mailfathom", "migrate"],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert (home / "mail-state").is_dir()


def test_an_import_source_under_the_home_directory_is_found(
    tmp_path: Path, write_config: Callable[[str], Path]
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    old = mailbox.Maildir(home / "old-mail", create=True)
    old.add(b"From: a@example.org\r\nSubject: kept\r\nMessage-ID: <k@example.org>\r\n\r\nbody\r\n")
    old.close()
    path = write_config(
        '[Store]\nDataDir = "~/mail-state"\n[[Accounts]]\nId = "notes"\nKind = "local"\n'
        '[[Accounts.Folders]]\nRemote = "INBOX"\n'
    )
    result = _cli(path, "import", "~/old-mail", "--account", "notes", home=home)
    assert result.returncode == 0, result.stderr
    assert "Imported 1 new message(s)" in result.stdout
