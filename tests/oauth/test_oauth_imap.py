"""Synchronizing an account that logs in to a real IMAP server with OAuth: XOAUTH2 and
OAUTHBEARER against Dovecot validating tokens at the test authorization server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from mailfathom.adapters.imap.session import ImapConnector
from mailfathom.adapters.oauth.sasl import choose_mechanism, initial_response
from mailfathom.domain.errors import MailServerAuthError
from mailfathom.domain.oauth import SaslMechanism
from oauth.mail_accounts import (
    FrozenClock,
    counting_token_endpoint,
    grant,
    oauth_account_config,
    process_tokens_recorded,
    token_active,
)
from servers.dovecot import DovecotServer, ImapAccount
from servers.oauth import OAuthServer
from sync.helpers import open_services, sample, stored_rows
from waiting import wait_for


@pytest.fixture
def short_tokens(oauth_server: OAuthServer) -> Iterator[None]:
    oauth_server.set_access_token_lifetime(2)
    yield
    oauth_server.set_access_token_lifetime(3600)


@pytest.mark.parametrize("mechanism", list(SaslMechanism))
def test_an_oauth_account_synchronizes_and_a_token_the_server_refuses_is_replaced_once(
    tmp_path: Path,
    oauth_server: OAuthServer,
    oauth_dovecot: DovecotServer,
    oauth_imap_account: ImapAccount,
    short_tokens: None,
    mechanism: SaslMechanism,
) -> None:
    client_id, refresh_file = grant(oauth_server, oauth_imap_account, tmp_path)
    oauth_dovecot.save_message(oauth_imap_account.username, sample("First message over oauth"))
    with (
        counting_token_endpoint(oauth_server.token_endpoint) as endpoint,
        process_tokens_recorded(clock=FrozenClock()) as tokens,
    ):
        account = oauth_account_config(
            oauth_imap_account, client_id, refresh_file, endpoint.url, mechanism=mechanism
        )
        with open_services(tmp_path, account) as services:
            synchronizer = services.account_synchronizer()
            synchronizer.run_once(account)
            assert endpoint.requests == 1
            first = tokens.current(account.account_id, account.oauth)  # type: ignore[arg-type]
            wait_for(lambda: not token_active(oauth_server, first), "the first token to expire")
            oauth_dovecot.save_message(
                oauth_imap_account.username, sample("Second message over oauth")
            )
            # The cache still holds the expired token: the server refuses it, and one
            # refresh later the login succeeds.
            synchronizer.run_once(account)
            assert endpoint.requests == 2
            assert len(stored_rows(services, account.account_id)) == 2
            assert services.account_health() == []


def test_a_second_refusal_is_a_refused_login_after_one_refresh(
    tmp_path: Path,
    oauth_server: OAuthServer,
    oauth_dovecot: DovecotServer,
    oauth_imap_account: ImapAccount,
) -> None:
    """Tokens granted to one user never log in as another: both are refused."""
    other = oauth_dovecot.add_user(f"{oauth_imap_account.username}-b", "pw-other")
    client_id, refresh_file = grant(oauth_server, oauth_imap_account, tmp_path)
    with (
        counting_token_endpoint(oauth_server.token_endpoint) as endpoint,
        process_tokens_recorded() as tokens,
    ):
        account = oauth_account_config(other, client_id, refresh_file, endpoint.url)
        with pytest.raises(MailServerAuthError) as caught:
            ImapConnector(tokens).open(account)
        assert caught.value.code == 31002
        assert endpoint.requests == 2


def test_auto_takes_oauthbearer_where_announced_and_xoauth2_otherwise() -> None:
    assert choose_mechanism(SaslMechanism.AUTO, ["PLAIN", "OAUTHBEARER", "XOAUTH2"]) is (
        SaslMechanism.OAUTHBEARER
    )
    assert choose_mechanism(SaslMechanism.AUTO, ["xoauth2"]) is SaslMechanism.XOAUTH2
    assert choose_mechanism(SaslMechanism.AUTO, []) is SaslMechanism.XOAUTH2
    assert choose_mechanism(SaslMechanism.XOAUTH2, ["OAUTHBEARER"]) is SaslMechanism.XOAUTH2
    assert initial_response(SaslMechanism.OAUTHBEARER, "a=b,c", "T", "h", 1) == (
        b"n,a=a=3Db=2Cc,\x01host=h\x01port=1\x01auth=Bearer T\x01\x01"
    )
    assert initial_response(SaslMechanism.XOAUTH2, "u", "T", "h", 1) == (
        b"user=u\x01auth=Bearer T\x01\x01"
    )
