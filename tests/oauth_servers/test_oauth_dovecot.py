"""Dovecot with the `oauth2` passdb accepts a good bearer token and refuses every bad one.

The logins are made with imaplib's AUTHENTICATE, as a mail client would: XOAUTH2 (Google's
and Microsoft's mechanism) and OAUTHBEARER (RFC 7628), each checked by Dovecot through
introspection at the test authorization server.
"""

from __future__ import annotations

import contextlib
import imaplib
import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field

import httpx2
import pytest

from servers.dovecot import DovecotServer, ImapAccount
from servers.oauth import OAuthServer, device_grant

MECHANISMS = ["XOAUTH2", "OAUTHBEARER"]
MESSAGE = (
    b"From: Alice <alice@example.org>\r\n"
    b"To: Bob <bob@example.org>\r\n"
    b"Subject: oauth harness check\r\n"
    b"Message-ID: <oauth-harness-1@example.org>\r\n"
    b"Date: Mon, 02 Jan 2023 10:00:00 +0000\r\n"
    b"\r\n"
    b"Read with a bearer token.\r\n"
)


def initial_response(mechanism: str, user: str, token: str) -> bytes:
    if mechanism == "XOAUTH2":
        return f"user={user}\x01auth=Bearer {token}\x01\x01".encode()
    return f"n,a={user},\x01auth=Bearer {token}\x01\x01".encode()


@dataclass
class Exchange:
    """What the server said during one AUTHENTICATE, and how it ended."""

    mechanism: str
    user: str
    token: str
    challenges: list[bytes] = field(default_factory=list)

    def __call__(self, challenge: bytes) -> bytes:
        self.challenges.append(challenge)
        if len(self.challenges) == 1:
            return initial_response(self.mechanism, self.user, self.token)
        # After an error challenge: XOAUTH2's empty reply, RFC 7628's %x01.
        return b"" if self.mechanism == "XOAUTH2" else b"\x01"


@contextlib.contextmanager
def imap_session(account: ImapAccount) -> Iterator[imaplib.IMAP4]:
    client = imaplib.IMAP4(account.host, account.port, timeout=20)
    try:
        yield client
    finally:
        with contextlib.suppress(imaplib.IMAP4.error, OSError):
            client.logout()


def refused(account: ImapAccount, mechanism: str, user: str, token: str) -> Exchange:
    """Log in and expect a refusal; return the exchange for its challenges."""
    exchange = Exchange(mechanism, user, token)
    with imap_session(account) as client, pytest.raises(imaplib.IMAP4.error) as failure:
        client.authenticate(mechanism, exchange)
    assert "AUTHENTICATIONFAILED" in str(failure.value)
    return exchange


def error_challenge(exchange: Exchange) -> dict[str, str]:
    """The JSON error the server sent in its challenge before refusing."""
    assert len(exchange.challenges) == 2, exchange.challenges
    found: dict[str, str] = json.loads(exchange.challenges[1])
    return found


@pytest.fixture
def public_client(oauth_server: OAuthServer) -> str:
    client_id = f"mail-{uuid.uuid4().hex[:8]}"
    oauth_server.add_client(client_id)
    return client_id


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_a_good_token_logs_in_and_reads_the_mail(
    oauth_server: OAuthServer,
    oauth_dovecot: DovecotServer,
    oauth_imap_account: ImapAccount,
    public_client: str,
    mechanism: str,
) -> None:
    oauth_dovecot.save_message(oauth_imap_account.username, MESSAGE)
    user = oauth_imap_account.username
    token = device_grant(oauth_server, client_id=public_client, subject=user)["access_token"]
    asked_before = oauth_server.counts().get("introspection", 0)
    with imap_session(oauth_imap_account) as client:
        typ, _ = client.authenticate(mechanism, Exchange(mechanism, user, token))
        assert typ == "OK"
        client.select("INBOX", readonly=True)
        typ, data = client.fetch("1", "(BODY.PEEK[])")
        assert typ == "OK"
        assert isinstance(data[0], tuple)
        assert data[0][1] == MESSAGE
    assert oauth_server.counts()["introspection"] > asked_before


def test_password_logins_keep_working_beside_oauth(
    oauth_dovecot: DovecotServer, oauth_imap_account: ImapAccount
) -> None:
    with imap_session(oauth_imap_account) as client:
        assert client.login(oauth_imap_account.username, oauth_imap_account.password)[0] == "OK"
        caps = set(client.capabilities)
    assert {"AUTH=XOAUTH2", "AUTH=OAUTHBEARER", "AUTH=PLAIN"} <= caps


def test_the_token_is_not_a_password(
    oauth_server: OAuthServer, oauth_imap_account: ImapAccount
) -> None:
    user = oauth_imap_account.username
    token = oauth_server.mint_access_token(user, audience="imap", scopes=["mail"])
    with imap_session(oauth_imap_account) as client, pytest.raises(imaplib.IMAP4.error):
        client.login(user, token)


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_an_expired_token_is_refused(
    oauth_server: OAuthServer, oauth_imap_account: ImapAccount, mechanism: str
) -> None:
    user = oauth_imap_account.username
    token = oauth_server.mint_access_token(user, audience="imap", scopes=[], expires_in=-60)
    exchange = refused(oauth_imap_account, mechanism, user, token)
    assert error_challenge(exchange)


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_a_revoked_token_is_refused(
    oauth_server: OAuthServer,
    oauth_imap_account: ImapAccount,
    public_client: str,
    mechanism: str,
) -> None:
    user = oauth_imap_account.username
    token = device_grant(oauth_server, client_id=public_client, subject=user)["access_token"]
    revoked = httpx2.post(
        oauth_server.revocation_endpoint, data={"token": token, "client_id": public_client}
    )
    assert revoked.status_code == 200
    refused(oauth_imap_account, mechanism, user, token)


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_a_token_of_another_user_is_refused(
    oauth_server: OAuthServer, oauth_imap_account: ImapAccount, mechanism: str
) -> None:
    token = oauth_server.mint_access_token("someone-else", audience="imap", scopes=[])
    refused(oauth_imap_account, mechanism, oauth_imap_account.username, token)


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_a_token_signed_by_an_unknown_key_is_refused(
    oauth_server: OAuthServer, oauth_imap_account: ImapAccount, mechanism: str
) -> None:
    user = oauth_imap_account.username
    token = oauth_server.mint_access_token(user, audience="imap", scopes=[], key="unknown")
    refused(oauth_imap_account, mechanism, user, token)


def test_a_garbage_token_is_refused_as_each_mechanism_says(
    oauth_imap_account: ImapAccount,
) -> None:
    user = oauth_imap_account.username
    xoauth2 = refused(oauth_imap_account, "XOAUTH2", user, "garbage")
    assert error_challenge(xoauth2)["status"] == "401"
    oauthbearer = refused(oauth_imap_account, "OAUTHBEARER", user, "garbage")
    assert error_challenge(oauthbearer)["status"] == "invalid_token"
