"""Checking a JWT access token (RFC 9068) offline, against its issuer's published keys.

The token is read unverified only to learn which configured issuer's keys to check it with;
an `iss` naming no configured issuer ends the check before any request is made, so a token
cannot send this endpoint to fetch keys from an address of its choosing. The algorithm must
be one the configuration accepts (never chosen by the token alone: RFC 8725 section 3.1),
the signature must verify with the issuer's key of that id, and the claims must hold: `iss`
exactly the issuer, `aud` this endpoint (RFC 8707), `exp`, `nbf` and `iat` within the
configured clock skew, and a subject. A `typ` other than a JWT or an access token JWT
(an ID token, a logout token) is refused. A value shaped like this deployment's API keys
(`domain.api_keys`) is refused before it is read at all.
"""

from __future__ import annotations

from collections.abc import Callable

import jwt
import structlog
from mcp.server.auth.provider import AccessToken

from mailfathom.domain.api_keys import is_api_key_shaped
from mailfathom.domain.mcp_oauth import McpOAuthConfig
from mailfathom.entrypoints.mcp.oauth.authorization_server import AuthorizationServerClient
from mailfathom.entrypoints.mcp.oauth.claims import access_token, audience_accepted
from mailfathom.entrypoints.mcp.oauth.jwks import IssuerKeys

_ACCEPTED_TYPES = frozenset({"jwt", "at+jwt", "application/at+jwt"})
_REQUIRED = ["exp", "iss", "aud", "sub"]

log = structlog.get_logger("mailfathom.mcp")


class JwtTokenVerifier:
    """The SDK's `TokenVerifier` for signed tokens. `verify_token` answers None for every
    token that does not hold, and raises `AuthorizationServerUnavailable` only while an
    issuer's keys were never fetched and cannot be."""

    def __init__(
        self,
        config: McpOAuthConfig,
        client: AuthorizationServerClient,
        keys: Callable[[str], IssuerKeys] | None = None,
    ) -> None:
        self._config = config
        self._keys = {
            issuer: (keys or self._issuer_keys(client))(issuer)
            for issuer in config.authorization_servers
        }

    def _issuer_keys(self, client: AuthorizationServerClient) -> Callable[[str], IssuerKeys]:
        def build(issuer: str) -> IssuerKeys:
            return IssuerKeys(
                client, issuer, self._config.jwks_uri, self._config.jwks_cache_seconds
            )

        return build

    async def verify_token(self, token: str) -> AccessToken | None:
        if is_api_key_shaped(token):
            return self._refused("shaped like an API key")
        try:
            header = jwt.get_unverified_header(token)
            unverified = jwt.decode(token, options={"verify_signature": False})
        except jwt.PyJWTError:
            return self._refused("malformed")
        algorithm = header.get("alg")
        kid = header.get("kid")
        issuer = unverified.get("iss")
        kind = header.get("typ", "JWT")
        if not isinstance(kind, str) or kind.lower() not in _ACCEPTED_TYPES:
            return self._refused("not an access token")
        if algorithm not in self._config.algorithms:
            return self._refused("algorithm")
        if not isinstance(issuer, str) or issuer not in self._keys:
            return self._refused("issuer")
        if kid is not None and not isinstance(kid, str):
            return self._refused("malformed")
        key = await self._keys[issuer].key_for(kid, algorithm)
        if key is None:
            return self._refused("unknown key")
        try:
            claims = jwt.decode(
                token,
                key=key.key,
                algorithms=[algorithm],
                issuer=issuer,
                leeway=self._config.clock_skew_seconds,
                options={"require": _REQUIRED, "verify_aud": False},
            )
        except jwt.ExpiredSignatureError:
            return self._refused("expired")
        except jwt.ImmatureSignatureError:
            return self._refused("not yet valid")
        except (jwt.PyJWTError, ValueError, TypeError):
            return self._refused("signature or claims")
        if not audience_accepted(claims, self._config):
            return self._refused("audience")
        if not isinstance(claims.get("sub"), str) or not claims["sub"]:
            return self._refused("subject")
        return access_token(token, claims, self._config)

    @staticmethod
    def _refused(reason: str) -> AccessToken | None:
        log.info("oauth.token_refused", reason=reason)
        return None
