"""Checking a submission server before it is written into a configuration: connect, protect
the session (implicit TLS or STARTTLS), log in, quit. No envelope is started."""

from __future__ import annotations

import asyncio
import contextlib
import ssl

import aiosmtplib

from mailfathom.adapters.config.secrets import read_secret
from mailfathom.adapters.oauth.sasl import OAuthLogin
from mailfathom.adapters.oauth.tokens import AccessTokens
from mailfathom.adapters.smtp.oauth_auth import OAuthRefused, log_in_with_token
from mailfathom.adapters.smtp.submission import ContextFactory, SmtpSubmission, oauth_login
from mailfathom.domain.codes import CheckCode
from mailfathom.domain.delivery_config import SmtpConnection
from mailfathom.domain.errors import SubmissionCheckFailed, SyncError
from mailfathom.domain.oauth import ConnectionAuth, OAuthCredential


def check_submission(
    account_id: str,
    connection: SmtpConnection,
    tls_context: ContextFactory = ssl.create_default_context,
    credential: OAuthCredential | None = None,
    tokens: AccessTokens | None = None,
) -> None:
    """Raise `SubmissionCheckFailed` (72001 unreachable or not protected as configured, 72002
    credentials refused), `SecretUnavailable`, or, for a connection with `Auth = "oauth2"`
    (whose account's `credential` is given), `ConsentRequired` or `SyncError` when no access
    token could be obtained; return when the server accepted the login. A refused token is
    replaced once, as a delivery does; `tokens` are the process's own unless given. Messages
    name the account only: never the server's reply, which may quote the user."""
    password = None
    oauth = None
    if connection.auth is ConnectionAuth.OAUTH2:
        oauth = oauth_login(account_id, credential, tokens)
        if oauth is None:
            raise SyncError(f"Account '{account_id}' logs in with OAuth but has no OAuth block.")
    elif connection.username is not None and connection.secret is not None:
        password = read_secret(connection.secret)
    asyncio.run(_check(account_id, connection, password, tls_context, oauth))


async def _check(
    account_id: str,
    connection: SmtpConnection,
    password: str | None,
    tls_context: ContextFactory,
    oauth: OAuthLogin | None = None,
) -> None:
    client = SmtpSubmission(connection, tls_context).client()
    try:
        await client.connect()
    except (aiosmtplib.SMTPException, OSError):
        raise SubmissionCheckFailed(
            f"The submission server of account '{account_id}' could not be reached, or did "
            "not protect the session as configured."
        ) from None
    try:
        if oauth is not None:
            await log_in_with_token(client, oauth, connection.username or "")
        elif connection.username is not None and password is not None:
            await client.login(connection.username, password)
    except (aiosmtplib.SMTPAuthenticationError, OAuthRefused):
        raise SubmissionCheckFailed(
            f"The submission server of account '{account_id}' refused the credentials.",
            code=int(CheckCode.SUBMISSION_CREDENTIALS_REFUSED),
        ) from None
    except (aiosmtplib.SMTPException, OSError):
        raise SubmissionCheckFailed(
            f"The submission server of account '{account_id}' failed during login."
        ) from None
    finally:
        with contextlib.suppress(aiosmtplib.SMTPException, OSError):
            await client.quit()
        client.close()
