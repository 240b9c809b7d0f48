"""Checking an access token by asking its issuer (RFC 7662 token introspection).

The answer counts only when `active` is true, and is then held to the rules a signed token
is: `iss` (where given) the configured issuer, `aud` this endpoint, `exp` present and `nbf`
and `iat` (where given) within the clock skew, and a `sub`. An active answer is kept for
`CACHE_SECONDS` at most (never past the token's expiry), keyed by the SHA-256 of the token,
so a session's requests do not each cost the issuer a request and the token itself is not
kept as a key; a revoked token is therefore refused within that time. The cache is bounded.

A value shaped like this deployment's API keys (`domain.api_keys`) is refused without being
sent, since it is a secret of this deployment.
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any, TypeGuard

import structlog
from mcp.server.auth.provider import AccessToken

from mailfathom.domain.api_keys import is_api_key_shaped
from mailfathom.domain.mcp_oauth import McpOAuthConfig
from mailfathom.entrypoints.mcp.oauth.authorization_server import (
    AuthorizationServerClient,
    issuer_metadata,
    published_address,
)
from mailfathom.entrypoints.mcp.oauth.claims import access_token, audience_accepted

CACHE_SECONDS = 30.0
CACHE_ENTRIES = 4096

log = structlog.get_logger("mailfathom.mcp")


class IntrospectionTokenVerifier:
    """The SDK's `TokenVerifier` asking the one configured issuer. `client_secret` reads
    the secret each time it is needed, so a rotated secret is used without a restart.
    Raises `AuthorizationServerUnavailable` when the issuer cannot be asked."""

    def __init__(
        self,
        config: McpOAuthConfig,
        client: AuthorizationServerClient,
        client_secret: Callable[[], str],
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._config = config
        self._client = client
        self._secret = client_secret
        self._clock = clock
        self._issuer = config.authorization_servers[0]
        self._endpoint = config.introspection_endpoint
        self._cache: OrderedDict[str, tuple[float, AccessToken]] = OrderedDict()

    async def verify_token(self, token: str) -> AccessToken | None:
        if is_api_key_shaped(token):
            log.info("oauth.token_refused", reason="shaped like an API key")
            return None
        digest = hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()
        now = self._clock()
        cached = self._cache.get(digest)
        if cached is not None and now < cached[0]:
            return cached[1]
        self._cache.pop(digest, None)
        answer = await self._client.post_form(
            await self._address(),
            {"token": token, "token_type_hint": "access_token"},
            (self._config.introspection_client_id or "", self._secret()),
        )
        reason = self._refusal(answer, now)
        if reason is not None:
            log.info("oauth.token_refused", reason=reason)
            return None
        found = access_token(token, {**answer, "iss": self._issuer}, self._config)
        self._remember(digest, found, min(now + CACHE_SECONDS, float(answer["exp"])))
        return found

    async def _address(self) -> str:
        if self._endpoint is None:
            metadata = await issuer_metadata(self._client, self._issuer)
            self._endpoint = published_address(metadata, "introspection_endpoint")
        return self._endpoint

    def _refusal(self, answer: Mapping[str, Any], now: float) -> str | None:
        skew = self._config.clock_skew_seconds
        if answer.get("active") is not True:
            return "inactive"
        if answer.get("iss", self._issuer) != self._issuer:
            return "issuer"
        if not audience_accepted(answer, self._config):
            return "audience"
        expires, not_before, issued = (answer.get(k) for k in ("exp", "nbf", "iat"))
        if not _is_time(expires) or expires <= now - skew:
            return "expired"
        for instant in (not_before, issued):
            if instant is not None and (not _is_time(instant) or instant > now + skew):
                return "not yet valid"
        subject = answer.get("sub")
        if not isinstance(subject, str) or not subject:
            return "subject"
        return None

    def _remember(self, digest: str, token: AccessToken, until: float) -> None:
        self._cache[digest] = (until, token)
        while len(self._cache) > CACHE_ENTRIES:
            self._cache.popitem(last=False)


def _is_time(value: object) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool)
