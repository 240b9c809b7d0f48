"""Checking a submission server before it is written into a configuration: connect, protect
the session (implicit TLS or STARTTLS), log in, quit. No envelope is started."""

from __future__ import annotations

import asyncio
import contextlib
import ssl

import aiosmtplib

from mailfathom.adapters.config.secrets import read_secret
from mailfathom.adapters.smtp.submission import ContextFactory, SmtpSubmission
from mailfathom.domain.codes import CheckCode
from mailfathom.domain.delivery_config import SmtpConnection
from mailfathom.domain.errors import SubmissionCheckFailed


def check_submission(
    account_id: str,
    connection: SmtpConnection,
    tls_context: ContextFactory = ssl.create_default_context,
) -> None:
    """Raise `SubmissionCheckFailed` (72001 unreachable or not protected as configured, 72002
    credentials refused) or `SecretUnavailable`; return when the server accepted the login.
    Messages name the account only: never the server's reply, which may quote the user."""
    password = None
    if connection.username is not None and connection.secret is not None:
        password = read_secret(connection.secret)
    asyncio.run(_check(account_id, connection, password, tls_context))


async def _check(
    account_id: str,
    connection: SmtpConnection,
    password: str | None,
    tls_context: ContextFactory,
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
        if connection.username is not None and password is not None:
            await client.login(connection.username, password)
    except aiosmtplib.SMTPAuthenticationError:
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
