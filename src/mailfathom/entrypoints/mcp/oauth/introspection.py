"""Checking an access token by asking its issuer (RFC 7662 token introspection).

The answer counts only when `active` is true, and is then held to the rules a signed token
is: `iss` (where given) the configured issuer, `aud` this endpoint, `exp` present and `nbf`
and `iat` (where given) within the clock skew, and a `sub`. An active answer is kept for
`CACHE_SECONDS` at most (never past the token's expiry), keyed by the SHA-256 of the token,
so a session's requests do not each cost the issuer a request and the token itself is not
kept as a key; a revoked token is therefore refused within that time. A refusal is kept the
same way for `REFUSAL_SECONDS`, so a client repeating a dead token does not repeat the
question. Both are bounded.

The issuer is asked only what it can answer: a value shaped like this deployment's API keys
(`domain.api_keys`) is refused without being sent, since it is a secret of this deployment.
At most `CONCURRENT_LOOKUPS` questions are put to it at once, so a flood of invented tokens
is not passed on as a flood, and a check waits for a free slot and the answer together no
longer than `LOOKUP_SECONDS`: past that the issuer counts as unavailable. Where the
introspection endpoint is not configured it is read from the issuer's metadata once, by one
request however many wait for it (`attempts`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any, TypeGuard

import anyio
import structlog
from mcp.server.auth.provider import AccessToken

from mailfathom.domain.api_keys import is_api_key_shaped
from mailfathom.domain.mcp_oauth import McpOAuthConfig
from mailfathom.entrypoints.mcp.oauth.attempts import Attempts
from mailfathom.entrypoints.mcp.oauth.authorization_server import (
    AuthorizationServerClient,
    AuthorizationServerUnavailable,
    issuer_metadata,
    published_address,
    within,
)
from mailfathom.entrypoints.mcp.oauth.claims import access_token, audience_accepted
from mailfathom.entrypoints.mcp.oauth.remembered import Remembered, token_digest

CACHE_SECONDS = 30.0
CACHE_ENTRIES = 4096
REFUSAL_SECONDS = 10.0
REFUSALS_KEPT = 4096
CONCURRENT_LOOKUPS = 8
LOOKUP_SECONDS = 5.0
REDISCOVER_SECONDS = 5.0

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
        self._admitted: Remembered[AccessToken] = Remembered(CACHE_ENTRIES)
        self._refused: Remembered[bool] = Remembered(REFUSALS_KEPT)
        self._lookups = anyio.Semaphore(CONCURRENT_LOOKUPS)
        self._discovery = Attempts(REDISCOVER_SECONDS, time.monotonic)

    async def verify_token(self, token: str) -> AccessToken | None:
        if is_api_key_shaped(token):
            log.info("oauth.token_refused", reason="shaped like an API key")
            return None
        digest = token_digest(token)
        now = self._clock()
        known, kept = self._kept(digest, now)
        if known:
            return kept
        with within(LOOKUP_SECONDS):
            address = await self._address()
            async with self._lookups:
                # Another check of the same token may have asked while this one waited.
                known, kept = self._kept(digest, now)
                if known:
                    return kept
                answer = await self._client.post_form(
                    address,
                    {"token": token, "token_type_hint": "access_token"},
                    (self._config.introspection_client_id or "", self._secret()),
                )
        reason = self._refusal(answer, now)
        if reason is not None:
            log.info("oauth.token_refused", reason=reason)
            self._refused.keep(digest, True, now + REFUSAL_SECONDS)
            return None
        found = access_token(token, {**answer, "iss": self._issuer}, self._config)
        self._admitted.keep(digest, found, min(now + CACHE_SECONDS, float(answer["exp"])))
        return found

    def _kept(self, digest: str, now: float) -> tuple[bool, AccessToken | None]:
        """Whether an answer about the token is kept, and the token it admitted."""
        if self._refused.get(digest, now):
            return True, None
        admitted = self._admitted.get(digest, now)
        return admitted is not None, admitted

    async def _address(self) -> str:
        if self._endpoint is None:
            await self._discovery.run(self._discover)
        if self._endpoint is None:
            raise AuthorizationServerUnavailable("the introspection endpoint is not known")
        return self._endpoint

    async def _discover(self) -> None:
        metadata = await issuer_metadata(self._client, self._issuer)
        self._endpoint = published_address(metadata, "introspection_endpoint")

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


def _is_time(value: object) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool)
