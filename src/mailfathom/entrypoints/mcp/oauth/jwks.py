"""One issuer's signing keys (its JWK Set), fetched when first needed and kept for a while.

Keys are fetched again when the cache has aged, and at once when a token names a key id
the set does not hold: that is how an issuer's key rotation reaches this endpoint without a
restart. Such a fetch happens at most once per `REFETCH_SECONDS`, whatever tokens arrive, so
a stream of tokens naming invented key ids costs the issuer one request per interval. While
the issuer cannot be reached, keys already fetched keep being used; with none, the caller is
told the server is unavailable rather than that its token is wrong.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import anyio
import structlog
from jwt import PyJWK, PyJWTError

from mailfathom.entrypoints.mcp.oauth.authorization_server import (
    AuthorizationServerClient,
    AuthorizationServerUnavailable,
    issuer_metadata,
    published_address,
)

REFETCH_SECONDS = 5.0

log = structlog.get_logger("mailfathom.mcp")


@dataclass(frozen=True, slots=True)
class _Key:
    kid: str | None
    use: str | None
    algorithm: str | None
    jwk: PyJWK


def _keys_of(document: Mapping[str, Any]) -> list[_Key]:
    """The usable keys of a JWK Set; a member this library cannot use is passed over."""
    members = document.get("keys")
    if not isinstance(members, list):
        raise AuthorizationServerUnavailable("the key set holds no keys")
    keys = []
    for member in members:
        # A shared-secret key (`oct`) never verifies a token here, whatever it claims.
        if not isinstance(member, dict) or member.get("kty") == "oct":
            continue
        try:
            jwk = PyJWK(member)
        except (PyJWTError, ValueError, TypeError, KeyError):
            continue
        kid, use, algorithm = (member.get(k) for k in ("kid", "use", "alg"))
        keys.append(
            _Key(
                kid if isinstance(kid, str) else None,
                use if isinstance(use, str) else None,
                algorithm if isinstance(algorithm, str) else None,
                jwk,
            )
        )
    if not keys:
        raise AuthorizationServerUnavailable("the key set holds no usable key")
    return keys


class IssuerKeys:
    def __init__(
        self,
        client: AuthorizationServerClient,
        issuer: str,
        jwks_uri: str | None,
        cache_seconds: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._client = client
        self._issuer = issuer
        self._jwks_uri = jwks_uri
        self._cache_seconds = cache_seconds
        self._clock = clock
        self._keys: list[_Key] = []
        self._fetched_at: float | None = None
        self._attempted_at: float | None = None
        self._lock = anyio.Lock()

    async def key_for(self, kid: str | None, algorithm: str) -> PyJWK | None:
        """The key that verifies a token with header `kid` and `alg`, or None when the issuer
        publishes none. Raises `AuthorizationServerUnavailable` while no key was ever fetched
        and the issuer cannot be reached."""
        if self._fetched_at is None or self._clock() - self._fetched_at >= self._cache_seconds:
            await self._refresh(reason="aged")
        found = self._find(kid, algorithm)
        if found is None:
            await self._refresh(reason="unknown key")
            found = self._find(kid, algorithm)
        if not self._keys:
            raise AuthorizationServerUnavailable("no key of the issuer could be fetched")
        return found

    def _may_refetch(self) -> bool:
        return self._attempted_at is None or self._clock() - self._attempted_at >= REFETCH_SECONDS

    def _find(self, kid: str | None, algorithm: str) -> PyJWK | None:
        usable = [
            key
            for key in self._keys
            if key.use in (None, "sig") and key.algorithm in (None, algorithm)
        ]
        if kid is not None:
            return next((key.jwk for key in usable if key.kid == kid), None)
        return usable[0].jwk if len(usable) == 1 else None

    async def _refresh(self, *, reason: str) -> None:
        async with self._lock:
            if not self._may_refetch():
                return
            self._attempted_at = self._clock()
            try:
                address = self._jwks_uri or published_address(
                    await issuer_metadata(self._client, self._issuer), "jwks_uri"
                )
                keys = _keys_of(await self._client.get(address))
            except AuthorizationServerUnavailable as failure:
                log.warning("oauth.keys_unavailable", reason=reason, failure=str(failure))
                return
            self._keys = keys
            self._fetched_at = self._clock()
