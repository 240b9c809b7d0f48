"""Logging in to an IMAP server: LOGIN with a password, or AUTHENTICATE with an access token.

With OAuth the mechanism is chosen from the `AUTH=` capabilities the server announced before
login (RFC 3501 section 6.2.2; RFC 7628 section 3). A refused token is answered once: the
account's tokens are asked for a fresh one (`after_refusal`) and the login is tried again on
the same connection; a second refusal is `MailServerAuthError`. A refresh token the provider
refused ends in `ConsentRequired` before the server is asked at all. Both outcomes of the
grant (refused, or a token accepted) reach the account's health through `OAuthLogin`; a
login the server refused, and a password it accepted, through `health` directly.

imaplib's debug output stays off (see `ImapConnector.open`): it would format the
AUTHENTICATE exchange, the token included, for a logger.
"""

from __future__ import annotations

import imaplib
from typing import Any

from imapclient import exceptions as imap_errors

from mailfathom.adapters.config.secrets import read_secret
from mailfathom.adapters.oauth.grant_health import GrantHealth
from mailfathom.adapters.oauth.sasl import (
    OAuthLogin,
    choose_mechanism,
    error_reply,
    initial_response,
)
from mailfathom.domain.config import AccountConfig, ImapConnection
from mailfathom.domain.errors import MailServerAuthError, SyncError
from mailfathom.domain.oauth import ConnectionAuth, SaslMechanism


class LoginRefused(Exception):
    """The server answered the login with NO (or BAD): the credentials were not accepted."""


def log_in(
    client: Any, account: AccountConfig, oauth: OAuthLogin | None, health: GrantHealth | None
) -> None:
    """Authenticate `client` as the account. A refused login raises `MailServerAuthError`
    (31002), a refused grant `ConsentRequired` (31003), each written to `health`; imaplib's
    and imapclient's network errors are left to the caller to translate."""
    settings = account.imap
    assert settings is not None
    if settings.auth is ConnectionAuth.PASSWORD:
        assert settings.secret is not None
        try:
            client.login(settings.username, read_secret(settings.secret))
        except imap_errors.LoginError as exc:
            raise _refused(account, health) from exc
        if health is not None:
            health.password_accepted(account.account_id)
        return
    if oauth is None:
        raise SyncError(
            f"Account '{account.account_id}' logs in with OAuth but has no OAuth block."
        )
    token = oauth.token()
    mechanism = choose_mechanism(oauth.credential.mechanism, _announced(client))
    try:
        _authenticate(client, settings, mechanism, token)
    except LoginRefused:
        token = oauth.after_refusal(token)
        try:
            _authenticate(client, settings, mechanism, token)
        except LoginRefused:
            raise _refused(account, health) from None
    oauth.accepted()


def _refused(account: AccountConfig, health: GrantHealth | None) -> MailServerAuthError:
    if health is not None:
        health.login_refused(account.account_id)
    return MailServerAuthError(
        f"The mail server refused the credentials of account '{account.account_id}'."
    )


def _announced(client: Any) -> list[str]:
    """The SASL mechanisms of the server's `AUTH=` capabilities."""
    names = []
    for capability in client.capabilities():
        text = (
            capability.decode("ascii", "replace")
            if isinstance(capability, bytes)
            else str(capability)
        )
        if text.upper().startswith("AUTH="):
            names.append(text[5:])
    return names


def _authenticate(
    client: Any, settings: ImapConnection, mechanism: SaslMechanism, token: str
) -> None:
    first = initial_response(mechanism, settings.username, token, settings.host, settings.port)
    answered = False

    def respond(challenge: bytes) -> bytes:
        nonlocal answered
        if not answered:
            answered = True
            return first
        # A second challenge is the server's error report (RFC 7628 section 3.2.2).
        return error_reply(mechanism)

    imap: imaplib.IMAP4 = client._imap
    try:
        typ, _ = imap.authenticate(mechanism.value.upper(), respond)
    except imaplib.IMAP4.abort:
        raise
    except imaplib.IMAP4.error:
        # imaplib's error text is the server's reply line; it goes no further.
        raise LoginRefused() from None
    if typ != "OK":
        raise LoginRefused()
