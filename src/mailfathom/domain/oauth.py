"""Logging in to a mail server with OAuth 2.0 instead of a password, as values.

Gmail and Microsoft 365 accept only an access token from a new application (SASL `XOAUTH2`,
or `OAUTHBEARER` of RFC 7628). An account that logs in that way keeps one credential for both
its IMAP and its submission server: the client the operator registered with the provider,
and a refresh token the person granted (RFC 6749 section 6), from which short-lived access
tokens are obtained when a connection needs one. Like every secret, the refresh token (and a
client secret, where the provider issued one) is configured only as where it is read from.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from mailfathom.domain.connections import SecretRef


class ConnectionAuth(enum.Enum):
    """How a connection to a mail server authenticates."""

    PASSWORD = "password"  # noqa: S105 (a method's name, not a secret)
    OAUTH2 = "oauth2"


class SaslMechanism(enum.Enum):
    """Which SASL mechanism presents the access token. `AUTO` takes `OAUTHBEARER` (RFC 7628)
    where the server announces it and `XOAUTH2` otherwise."""

    AUTO = "auto"
    XOAUTH2 = "xoauth2"
    OAUTHBEARER = "oauthbearer"


class OAuthProvider(enum.Enum):
    """Whose authorization server issues the tokens. The two named providers come with their
    endpoints, scopes and servers preset; `GENERIC` names every endpoint itself."""

    GMAIL = "gmail"
    MICROSOFT = "microsoft"
    GENERIC = "generic"


@dataclass(frozen=True, slots=True)
class OAuthCredential:
    """An account's `OAuth` block.

    `token_endpoint` is where refresh tokens are exchanged (RFC 6749 section 3.2);
    `device_authorization_endpoint` (RFC 8628) and `authorization_endpoint` (RFC 8252, with
    PKCE) are read only when a person grants access again. `scopes` are requested exactly as
    listed. `refresh_margin_seconds` is how long before its expiry an access token is
    replaced, so a connection is never opened with a token about to lapse."""

    provider: OAuthProvider
    client_id: str
    refresh_token: SecretRef
    token_endpoint: str
    scopes: tuple[str, ...]
    client_secret: SecretRef | None = None
    device_authorization_endpoint: str | None = None
    authorization_endpoint: str | None = None
    revocation_endpoint: str | None = None
    mechanism: SaslMechanism = SaslMechanism.AUTO
    refresh_margin_seconds: float = 60.0
