"""A refresh token the provider rotated and the account's file would not take: the account
keeps synchronizing, `mfctl accounts` and the console's health page warn of it with what to
do (and the command does not log in with the replaced token), and the write that succeeds a
minute later clears it; on SQLite and PostgreSQL."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

import log_audit
from mailfathom.adapters.oauth import tokens as tokens_module
from mailfathom.adapters.oauth.tokens import WRITE_AGAIN_SECONDS
from mailfathom.bootstrap import Services
from mailfathom.domain.config import AccountConfig, DeploymentConfig, StoreConfig
from oauth.mail_accounts import (
    counting_token_endpoint,
    grant,
    mfctl_accounts,
    oauth_account_config,
    oauth_account_toml,
    process_tokens_recorded,
)
from servers.dovecot import DovecotServer, ImapAccount
from servers.oauth import OAuthServer
from sync.conftest import database_url  # noqa: F401  (the fixture, for both stores)
from sync.helpers import sample, stored_rows

WARNING_LINE = "refresh token not saved (31009) since "


class MovableClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _config_file(tmp_path: Path, account: AccountConfig, url: str | None) -> Path:
    """The deployment as a configuration file, for `mfctl accounts`."""
    store = "" if url is None else f'DatabaseUrl = "{url}"'
    path = tmp_path / "mailfathom.toml"
    path.write_text(
        f'[Store]\nDataDir = "{tmp_path / "data"}"\n{store}\n{oauth_account_toml(account)}',
        "utf-8",
    )
    return path


def _unwritable(path: Path, value: str) -> None:
    raise OSError(errno.EROFS, "Read-only file system")


@pytest.mark.process
def test_an_unsaved_refresh_token_is_shown_without_holding_the_account(
    tmp_path: Path,
    oauth_server: OAuthServer,
    oauth_dovecot: DovecotServer,
    oauth_imap_account: ImapAccount,
    database_url: str | None,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    user = oauth_imap_account.username
    client_id, refresh_file = grant(oauth_server, oauth_imap_account, tmp_path)
    granted = refresh_file.read_text().strip()
    oauth_dovecot.save_message(user, sample("Before the rotation"))
    real_write = tokens_module.replace_secret_file
    monkeypatch.setattr(tokens_module, "replace_secret_file", _unwritable)
    clock = MovableClock()
    with (
        counting_token_endpoint(oauth_server.token_endpoint) as endpoint,
        process_tokens_recorded(clock),
    ):
        account = oauth_account_config(oauth_imap_account, client_id, refresh_file, endpoint.url)
        config = DeploymentConfig(
            store=StoreConfig(data_dir=tmp_path / "data", database_url=database_url),
            accounts=(account,),
        )
        listed_config = _config_file(tmp_path, account, database_url)
        with Services.open(config) as services:
            services.account_synchronizer().run_once(account)
            assert len(stored_rows(services, account.account_id)) == 1
            # The provider rotated the token; the file still holds the replaced one.
            assert refresh_file.read_text().strip() == granted
            asked = endpoint.requests

            listing = mfctl_accounts(listed_config)
            assert listing.returncode == 0, listing.stdout + listing.stderr
            assert f"{account.account_id}: {WARNING_LINE}" in listing.stdout
            assert "31009" in listing.stderr
            assert "writable" in listing.stderr
            assert "restart" in listing.stderr
            assert granted not in listing.stdout + listing.stderr
            # The command did not present the replaced token (which the provider would take
            # as a grant to refuse) to check the account's folders.
            assert endpoint.requests == asked
            assert services.account_health() == []

            (line,) = services.console_health().report().accounts
            assert line.held is None
            assert [(w.account_id, w.code) for w in line.warnings] == [(account.account_id, 31009)]

            # Nothing is held: the account keeps synchronizing on the token kept in memory.
            oauth_dovecot.save_message(user, sample("After the rotation"))
            services.account_synchronizer().run_once(account)
            assert len(stored_rows(services, account.account_id)) == 2

            # The file takes it again: the next connection a minute later writes it.
            monkeypatch.setattr(tokens_module, "replace_secret_file", real_write)
            clock.now += WRITE_AGAIN_SECONDS
            services.account_synchronizer().run_once(account)
            rotated = refresh_file.read_text().strip()
            log_audit.register(rotated)
            assert rotated != granted
            assert services.account_warnings() == []
            listing = mfctl_accounts(listed_config)
            assert listing.returncode == 0, listing.stdout + listing.stderr
            assert WARNING_LINE not in listing.stdout
            assert "31009" not in listing.stderr
    log_audit.register(refresh_file.read_text().strip())
