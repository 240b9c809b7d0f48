"""Handing a message to a submission server with `aiosmtplib` (RFC 5321, RFC 6409).

One session per attempt: connect (implicit TLS, or STARTTLS required before anything else is
said), authenticate when the account has credentials, MAIL FROM, one RCPT TO per address,
and DATA only when every recipient was either accepted or refused for good. A temporary
refusal of any recipient ends the session before DATA, so the whole message waits for the
next attempt and nobody who accepted it now receives it twice.

aiosmtplib's exceptions stay here: the pass sees reply codes and a few facts (connected,
handed over, authentication refused), never a server's text.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import Callable, Sequence

import aiosmtplib

from mailfathom.adapters.config.secrets import read_secret
from mailfathom.adapters.oauth.grant_health import GrantHealth
from mailfathom.adapters.oauth.sasl import OAuthLogin
from mailfathom.adapters.oauth.tokens import AccessTokens, process_tokens
from mailfathom.adapters.smtp.oauth_auth import OAuthRefused, log_in_with_token
from mailfathom.app.sending.ports import RecipientReply, SubmissionOutcome
from mailfathom.domain.config import DeploymentConfig
from mailfathom.domain.connections import TlsMode
from mailfathom.domain.delivery_config import SmtpConnection
from mailfathom.domain.errors import ConsentRequired, SecretUnavailable, SyncError
from mailfathom.domain.oauth import ConnectionAuth, OAuthCredential

ContextFactory = Callable[[], ssl.SSLContext]


class SmtpSubmission:
    def __init__(
        self,
        connection: SmtpConnection,
        tls_context: ContextFactory = ssl.create_default_context,
        local_hostname: str | None = None,
        oauth: OAuthLogin | None = None,
    ) -> None:
        self._connection = connection
        self._tls_context = tls_context
        self._local_hostname = local_hostname
        self._oauth = oauth if connection.auth is ConnectionAuth.OAUTH2 else None

    def submit(
        self,
        envelope_from: str,
        recipients: Sequence[str],
        mime: bytes,
        before_data: Callable[[], bool],
    ) -> SubmissionOutcome:
        return asyncio.run(self._submit(envelope_from, recipients, mime, before_data))

    def client(self) -> aiosmtplib.SMTP:
        """A client for one session, not yet connected."""
        c = self._connection
        protected = c.tls is not TlsMode.NONE
        return aiosmtplib.SMTP(
            hostname=c.host,
            port=c.port,
            use_tls=c.tls is TlsMode.IMPLICIT,
            start_tls=c.tls is TlsMode.STARTTLS,
            tls_context=self._tls_context() if protected else None,
            timeout=c.timeout_seconds,
            local_hostname=self._local_hostname,
        )

    async def _submit(
        self,
        envelope_from: str,
        recipients: Sequence[str],
        mime: bytes,
        before_data: Callable[[], bool],
    ) -> SubmissionOutcome:
        c = self._connection
        password: str | None = None
        token: str | None = None
        try:
            if self._oauth is not None:
                # Before connecting: an account waiting for consent reaches nobody.
                token = self._oauth.token()
            elif c.username is not None and c.secret is not None:
                password = read_secret(c.secret)
        except SecretUnavailable:
            return SubmissionOutcome(connected=False, secret_unreadable=True)
        except ConsentRequired:
            return SubmissionOutcome(connected=False, temporary=True, consent_required=True)
        except SyncError:
            return SubmissionOutcome(connected=False, temporary=True)
        client = self.client()
        try:
            await client.connect()
        except (aiosmtplib.SMTPException, OSError):
            return SubmissionOutcome(connected=False, temporary=True)
        try:
            if token is not None:
                refused = await self._log_in_with_token(client, token)
                if refused is not None:
                    return refused
            return await self._session(
                client, password, envelope_from, recipients, mime, before_data
            )
        finally:
            with contextlib.suppress(aiosmtplib.SMTPException, OSError):
                await client.quit()
            client.close()

    async def _log_in_with_token(
        self, client: aiosmtplib.SMTP, token: str
    ) -> SubmissionOutcome | None:
        """Present the token, and a fresh one once if it is refused; None when logged in,
        else the outcome that ends the attempt."""
        assert self._oauth is not None
        try:
            await log_in_with_token(client, self._oauth, self._connection.username or "", token)
        except OAuthRefused:
            return SubmissionOutcome(connected=False, authentication_refused=True)
        except ConsentRequired:
            return SubmissionOutcome(connected=False, temporary=True, consent_required=True)
        except SecretUnavailable:
            return SubmissionOutcome(connected=False, secret_unreadable=True)
        except (SyncError, aiosmtplib.SMTPException, OSError):
            return SubmissionOutcome(connected=False, temporary=True)
        return None

    async def _session(
        self,
        client: aiosmtplib.SMTP,
        password: str | None,
        envelope_from: str,
        recipients: Sequence[str],
        mime: bytes,
        before_data: Callable[[], bool],
    ) -> SubmissionOutcome:
        c = self._connection
        try:
            if c.username is not None and password is not None:
                await client.login(c.username, password)
            await client.mail(envelope_from)
        except aiosmtplib.SMTPAuthenticationError:
            return SubmissionOutcome(connected=False, authentication_refused=True)
        except aiosmtplib.SMTPResponseException as refused:
            temporary = 400 <= refused.code < 500
            return SubmissionOutcome(connected=not temporary, temporary=temporary)
        except (aiosmtplib.SMTPException, OSError):
            return SubmissionOutcome(connected=False, temporary=True)
        replies: list[RecipientReply] = []
        try:
            for address in recipients:
                try:
                    response = await client.rcpt(address)
                    replies.append(RecipientReply(address, response.code, accepted=True))
                except aiosmtplib.SMTPRecipientRefused as refused:
                    temporary = 400 <= refused.code < 500
                    replies.append(
                        RecipientReply(address, refused.code, accepted=False, temporary=temporary)
                    )
        except (aiosmtplib.SMTPException, OSError):
            return SubmissionOutcome(connected=False, temporary=True)
        offered = tuple(replies)
        if any(r.temporary for r in offered):
            return SubmissionOutcome(connected=True, recipients=offered, temporary=True)
        if not any(r.accepted for r in offered):
            return SubmissionOutcome(connected=True, recipients=offered)
        if not before_data():
            return SubmissionOutcome(connected=True, recipients=offered, temporary=True)
        try:
            response = await client.data(mime)
        except aiosmtplib.SMTPResponseException as refused:
            temporary = 400 <= refused.code < 500
            return SubmissionOutcome(
                connected=True,
                recipients=offered,
                handed_over=True,
                data_code=refused.code,
                temporary=temporary,
            )
        except (aiosmtplib.SMTPException, OSError):
            # The message went out and no answer came back: it may have been accepted.
            return SubmissionOutcome(connected=True, recipients=offered, handed_over=True)
        return SubmissionOutcome(
            connected=True, recipients=offered, handed_over=True, data_code=response.code
        )


class SmtpTransports:
    """The submission server of each account that declares one."""

    def __init__(
        self,
        config: DeploymentConfig,
        tls_context: ContextFactory = ssl.create_default_context,
        tokens: AccessTokens | None = None,
        health: GrantHealth | None = None,
    ) -> None:
        self._transports: dict[str, SmtpSubmission] = {}
        for account in config.accounts:
            if account.delivery is not None and account.delivery.smtp is not None:
                self._transports[account.account_id] = SmtpSubmission(
                    account.delivery.smtp,
                    tls_context,
                    oauth=oauth_login(account.account_id, account.oauth, tokens, health),
                )

    def transport_for(self, account_id: str) -> SmtpSubmission | None:
        return self._transports.get(account_id)


def oauth_login(
    account_id: str,
    credential: OAuthCredential | None,
    tokens: AccessTokens | None,
    health: GrantHealth | None = None,
) -> OAuthLogin | None:
    """How the account's submission logs in with OAuth, where it has an OAuth block."""
    if credential is None:
        return None
    tokens = tokens if tokens is not None else process_tokens()
    return OAuthLogin(account_id, credential, tokens, health)
