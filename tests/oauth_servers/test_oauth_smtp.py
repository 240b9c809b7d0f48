"""The test submission server accepts a good bearer token and refuses every bad one.

smtplib logs in over STARTTLS as a mail client would, with XOAUTH2 and OAUTHBEARER
(RFC 7628); the server introspects the token at the test authorization server.
"""

from __future__ import annotations

import contextlib
import json
import smtplib
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import httpx2
import pytest

from servers.oauth import OAuthServer, device_grant
from servers.smtp import SmtpServer

MECHANISMS = ["XOAUTH2", "OAUTHBEARER"]
MESSAGE = b"From: user@example.test\r\nTo: friend@example.org\r\nSubject: hi\r\n\r\nHello.\r\n"


def initial_response(mechanism: str, user: str | None, token: str) -> str:
    if mechanism == "XOAUTH2":
        return f"user={user}\x01auth=Bearer {token}\x01\x01"
    authzid = f"a={user}" if user is not None else ""
    return f"n,{authzid},\x01auth=Bearer {token}\x01\x01"


@dataclass
class Exchange:
    """smtplib's authobject: the initial response, then each mechanism's reply to an error."""

    mechanism: str
    user: str | None
    token: str
    challenges: list[bytes] = field(default_factory=list)

    def __call__(self, challenge: bytes | None = None) -> str:
        if challenge is None:
            return initial_response(self.mechanism, self.user, self.token)
        self.challenges.append(challenge)
        return "" if self.mechanism == "XOAUTH2" else "\x01"


@contextlib.contextmanager
def submission(server: SmtpServer) -> Iterator[smtplib.SMTP]:
    client = smtplib.SMTP(server.host, server.port, timeout=30)
    try:
        client.starttls(context=server.client_context())
        client.ehlo()
        yield client
    finally:
        with contextlib.suppress(smtplib.SMTPException, OSError):
            client.quit()


def refused(server: SmtpServer, mechanism: str, user: str, token: str) -> dict[str, str]:
    """Log in, expect 535 after one error challenge; return that challenge's JSON."""
    exchange = Exchange(mechanism, user, token)
    with submission(server) as client, pytest.raises(smtplib.SMTPAuthenticationError) as failure:
        client.auth(mechanism, exchange)
    assert failure.value.smtp_code == 535
    assert len(exchange.challenges) == 1
    found: dict[str, str] = json.loads(exchange.challenges[0])
    return found


@pytest.fixture
def public_client(oauth_server: OAuthServer) -> str:
    client_id = f"smtp-{uuid.uuid4().hex[:8]}"
    oauth_server.add_client(client_id)
    return client_id


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_a_good_token_logs_in_and_the_spool_says_how(
    oauth_server: OAuthServer, oauth_smtp: SmtpServer, public_client: str, mechanism: str
) -> None:
    user = f"u-{uuid.uuid4().hex[:8]}@example.test"
    token = device_grant(oauth_server, client_id=public_client, subject=user)["access_token"]
    with submission(oauth_smtp) as client:
        assert client.auth(mechanism, Exchange(mechanism, user, token))[0] == 235
        client.sendmail(user, ["friend@example.org"], MESSAGE)
    [received] = oauth_smtp.received()
    assert (received.login, received.mechanism) == (user, mechanism)
    assert received.content == MESSAGE


def test_oauthbearer_without_an_authorization_identity_is_the_tokens_user(
    oauth_server: OAuthServer, oauth_smtp: SmtpServer
) -> None:
    token = oauth_server.mint_access_token("owner@example.test", audience="smtp", scopes=[])
    with submission(oauth_smtp) as client:
        assert client.auth("OAUTHBEARER", Exchange("OAUTHBEARER", None, token))[0] == 235
        client.sendmail("owner@example.test", ["friend@example.org"], MESSAGE)
    assert oauth_smtp.received()[0].login == "owner@example.test"


def test_password_logins_keep_working_beside_oauth(oauth_smtp: SmtpServer) -> None:
    with submission(oauth_smtp) as client:
        assert {"XOAUTH2", "OAUTHBEARER", "PLAIN", "LOGIN"} <= set(
            client.esmtp_features["auth"].split()
        )
        client.login("sender@example.test", "sender-password")
        client.sendmail("sender@example.test", ["friend@example.org"], MESSAGE)
    [received] = oauth_smtp.received()
    assert (received.login, received.mechanism) == ("sender@example.test", "PLAIN")


def test_without_an_authorization_server_no_oauth_mechanism_is_offered() -> None:
    server = SmtpServer({"a@example.test": "pw"}).start()
    try:
        with submission(server) as client:
            offered = set(client.esmtp_features["auth"].split())
        assert not offered & set(MECHANISMS)
    finally:
        server.close()


def _expired(server: OAuthServer, user: str, client_id: str) -> str:
    return server.mint_access_token(user, audience="smtp", scopes=[], expires_in=-60)


def _revoked(server: OAuthServer, user: str, client_id: str) -> str:
    token: str = device_grant(server, client_id=client_id, subject=user)["access_token"]
    answer = httpx2.post(server.revocation_endpoint, data={"token": token, "client_id": client_id})
    assert answer.status_code == 200
    return token


def _other_user(server: OAuthServer, user: str, client_id: str) -> str:
    return server.mint_access_token("someone-else@example.test", audience="smtp", scopes=[])


def _unknown_key(server: OAuthServer, user: str, client_id: str) -> str:
    return server.mint_access_token(user, audience="smtp", scopes=[], key="unknown")


def _garbage(server: OAuthServer, user: str, client_id: str) -> str:
    return "garbage"


@pytest.mark.parametrize(
    "bad_token",
    [_expired, _revoked, _other_user, _unknown_key, _garbage],
    ids=["expired", "revoked", "other-user", "unknown-key", "garbage"],
)
def test_a_bad_token_is_refused_as_each_mechanism_says(
    oauth_server: OAuthServer,
    oauth_smtp: SmtpServer,
    public_client: str,
    bad_token: Callable[[OAuthServer, str, str], str],
) -> None:
    user = f"u-{uuid.uuid4().hex[:8]}@example.test"
    token = bad_token(oauth_server, user, public_client)
    # Google's XOAUTH2: a JSON error with an HTTP-like status, the client's empty reply, 535.
    assert refused(oauth_smtp, "XOAUTH2", user, token)["status"] == "401"
    # RFC 7628 section 3.2.2: an error status, the client's %x01, then the failure.
    assert refused(oauth_smtp, "OAUTHBEARER", user, token)["status"] == "invalid_token"
    with submission(oauth_smtp) as client, pytest.raises(smtplib.SMTPSenderRefused):
        client.sendmail(user, ["friend@example.org"], MESSAGE)
    assert oauth_smtp.received() == []
