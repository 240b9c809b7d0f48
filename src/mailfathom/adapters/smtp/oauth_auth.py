"""SMTP AUTH with an access token (RFC 4954), XOAUTH2 or OAUTHBEARER (RFC 7628).

aiosmtplib has XOAUTH2 (`auth_xoauth2`) but not OAUTHBEARER, so both are spoken here with
`execute_command`, the same way: the initial response on the AUTH line, and where the server
answers 334 with its error challenge, the dummy reply RFC 7628 section 3.2.3 asks for (an
empty line for XOAUTH2), after which the server sends its final failure. 235 is success.
Neither the token nor the server's challenge or reply text leaves this module.

A refused token is answered once, as an IMAP login answers it: the account's tokens are
asked for a fresh one (`after_refusal`) and AUTH is tried again in the same session; a
second refusal ends the login.
"""

from __future__ import annotations

import asyncio
import base64

import aiosmtplib

from mailfathom.adapters.oauth.sasl import (
    OAuthLogin,
    choose_mechanism,
    error_reply,
    initial_response,
)
from mailfathom.domain.oauth import SaslMechanism

_AUTH_CONTINUE = 334
_AUTH_SUCCESSFUL = 235


class OAuthRefused(Exception):
    """The server refused the token (a 5xx or 4xx after AUTH)."""


async def authenticate_with_token(
    client: aiosmtplib.SMTP, wanted: SaslMechanism, username: str, token: str
) -> None:
    """Log `client` in as `username` with `token`, choosing the mechanism from the EHLO AUTH
    list. Raises `OAuthRefused`; a lost connection raises aiosmtplib's errors."""
    if client.is_ehlo_or_helo_needed:
        await client.ehlo()
    mechanism = choose_mechanism(wanted, client.server_auth_methods)
    host = client.hostname or ""
    port = client.port or 0
    first = initial_response(mechanism, username, token, host, port)
    response = await client.execute_command(
        b"AUTH", mechanism.value.upper().encode("ascii"), base64.b64encode(first)
    )
    if response.code == _AUTH_CONTINUE:
        reply = error_reply(mechanism)
        response = await client.execute_command(base64.b64encode(reply) if reply else b"")
    if response.code != _AUTH_SUCCESSFUL:
        raise OAuthRefused()


async def log_in_with_token(
    client: aiosmtplib.SMTP, oauth: OAuthLogin, username: str, token: str | None = None
) -> None:
    """Log `client` in with the account's access token (`token`, when already taken), and a
    fresh one once if the server refuses it. Raises `OAuthRefused` for the second refusal,
    and what `OAuthLogin` raises when no token can be had (`ConsentRequired`, ...)."""
    mechanism = oauth.credential.mechanism
    if token is None:
        token = await asyncio.to_thread(oauth.token)
    try:
        await authenticate_with_token(client, mechanism, username, token)
    except OAuthRefused:
        token = await asyncio.to_thread(oauth.after_refusal, token)
        await authenticate_with_token(client, mechanism, username, token)
    await asyncio.to_thread(oauth.accepted)
