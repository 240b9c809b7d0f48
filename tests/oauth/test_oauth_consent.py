"""A refresh token the provider revoked: the account's health says so, nothing asks the
provider again, the other accounts keep synchronizing, and a new grant resumes it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import log_audit
from mailfathom.bootstrap import Services
from mailfathom.domain.account_health import HealthState
from mailfathom.domain.config import AccountConfig, DeploymentConfig, StoreConfig
from oauth.mail_accounts import (
    counting_token_endpoint,
    grant,
    mfctl_accounts,
    oauth_account_config,
    oauth_account_toml,
    process_tokens_recorded,
    write_grant,
)
from servers.dovecot import DovecotServer, ImapAccount
from servers.oauth import OAuthServer
from sync.helpers import imap_account_config, sample, stored_rows
from waiting import wait_for


@pytest.fixture
def short_tokens(oauth_server: OAuthServer) -> Iterator[None]:
    oauth_server.set_access_token_lifetime(2)
    yield
    oauth_server.set_access_token_lifetime(3600)


def _config_file(tmp_path: Path, oauth: AccountConfig, password: AccountConfig) -> Path:
    """The same two accounts as a configuration file, for `mfctl accounts`."""
    assert password.imap is not None
    assert password.imap.secret is not None
    path = tmp_path / "mailfathom.toml"
    path.write_text(
        f"""
[Store]
DataDir = "{tmp_path / "data"}"
{oauth_account_toml(oauth)}
[[Accounts]]
Id = "{password.account_id}"
Kind = "imap"
[Accounts.Imap]
Host = "{password.imap.host}"
Port = {password.imap.port}
Username = "{password.imap.username}"
Tls = "none"
Secret = {{ Env = "{password.imap.secret.env}" }}
[[Accounts.Folders]]
Remote = "INBOX"
Role = "Inbox"
""",
        "utf-8",
    )
    return path


def _wait_for_rows(services: Services, account_id: str, count: int) -> None:
    wait_for(lambda: len(stored_rows(services, account_id)) == count, "the account's new mail")


@pytest.mark.process
def test_a_revoked_grant_holds_only_its_account_until_a_new_one_is_written(
    tmp_path: Path,
    oauth_server: OAuthServer,
    oauth_dovecot: DovecotServer,
    oauth_imap_account: ImapAccount,
    short_tokens: None,
) -> None:
    user = oauth_imap_account.username
    neighbour = oauth_dovecot.add_user(f"{user}-n", "pw-neighbour")
    client_id, refresh_file = grant(oauth_server, oauth_imap_account, tmp_path)
    oauth_dovecot.save_message(user, sample("Before the grant was withdrawn"))
    with (
        counting_token_endpoint(oauth_server.token_endpoint) as endpoint,
        process_tokens_recorded(),
    ):
        held = oauth_account_config(
            oauth_imap_account, client_id, refresh_file, endpoint.url, poll_interval_seconds=0.3
        )
        other = imap_account_config(neighbour, poll_interval_seconds=0.3)
        config = DeploymentConfig(
            store=StoreConfig(data_dir=tmp_path / "data"), accounts=(held, other)
        )
        stop = threading.Event()
        with Services.open(config) as services:
            synchronizer = services.account_synchronizer()
            runs = [
                threading.Thread(target=synchronizer.run_forever, args=(account, stop))
                for account in (held, other)
            ]
            for run in runs:
                run.start()
            try:
                wait_for(lambda: len(stored_rows(services, held.account_id)) == 1, "first sync")
                oauth_server.revoke_refresh_tokens(user)
                health = wait_for(services.account_health, "the account's health to say so")
                assert [(h.account_id, h.state, h.code) for h in health] == [
                    (held.account_id, HealthState.CONSENT_REQUIRED, 31003)
                ]
                asked = endpoint.requests
                # The other account keeps synchronizing while this one waits.
                for number in (1, 2):
                    oauth_dovecot.save_message(
                        neighbour.username, sample(f"Neighbour mail number {number}")
                    )
                    _wait_for_rows(services, other.account_id, number)
                oauth_dovecot.save_message(user, sample("While the grant was withdrawn"))
                listing = mfctl_accounts(_config_file(tmp_path, held, other))
                assert listing.returncode != 0
                assert "needs consent (31003)" in listing.stdout
                assert "31003" in listing.stderr
                assert held.account_id in listing.stderr
                assert "mfctl account consent" in listing.stderr
                granted = refresh_file.read_text().strip()
                assert granted not in listing.stdout + listing.stderr
                assert endpoint.requests == asked
                assert len(stored_rows(services, held.account_id)) == 1

                write_grant(oauth_server, client_id, oauth_imap_account, refresh_file)
                wait_for(
                    lambda: len(stored_rows(services, held.account_id)) == 2,
                    "the held account to resume with its new grant",
                )
                wait_for(lambda: services.account_health() == [], "the health to clear")
                assert mfctl_accounts(_config_file(tmp_path, held, other)).returncode == 0
            finally:
                stop.set()
                for run in runs:
                    run.join(30)
    log_audit.register(refresh_file.read_text().strip())
