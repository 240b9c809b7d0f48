"""One issuer's signing keys (its JWK Set), fetched when first needed and kept for a while.

Keys that have aged are still used at once while one refresh runs behind the request that
noticed, so an issuer that is slow or down delays nobody whose token's key is known. A token
naming a key id the set does not hold waits for one fetch (bounded by `FETCH_SECONDS`): that
is how an issuer's key rotation reaches this endpoint without a restart. Fetches go one at a
time, a request arriving during one takes its outcome, and the next starts no sooner than
`REFETCH_SECONDS` after the last ended (`attempts`), so a stream of tokens naming invented
key ids costs the issuer one request per interval. While the issuer cannot be reached, keys
already fetched keep being used; with none, the caller is told the server is unavailable
rather than that its token is wrong.

The address of the key set, when not configured, is read from the issuer's metadata once and
kept: it is read again when the address answers that the keys moved (a redirect, 404, 410),
or after `METADATA_SECONDS`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

import structlog
from jwt import PyJWK, PyJWTError

from mailfathom.entrypoints.mcp.oauth.attempts import Attempts
from mailfathom.entrypoints.mcp.oauth.authorization_server import (
    AddressMoved,
    AuthorizationServerClient,
    AuthorizationServerUnavailable,
    issuer_metadata,
    published_address,
    within,
)

REFETCH_SECONDS = 5.0
FETCH_SECONDS = 5.0
METADATA_SECONDS = 24 * 3600.0

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
        self._configured = jwks_uri
        self._discovered: tuple[str, float] | None = None
        self._cache_seconds = cache_seconds
        self._clock = clock
        self._keys: list[_Key] = []
        self._fetched_at: float | None = None
        self._attempts = Attempts(REFETCH_SECONDS, clock)
        self._refreshing = False

    async def key_for(self, kid: str | None, algorithm: str) -> PyJWK | None:
        """The key that verifies a token with header `kid` and `alg`, or None when the issuer
        publishes none. Raises `AuthorizationServerUnavailable` while no key was ever fetched
        and the issuer cannot be reached."""
        if self._fetched_at is None:
            await self._attempts.run(partial(self._fetch, reason="first"))
        elif self._clock() - self._fetched_at >= self._cache_seconds:
            self._refresh_behind()
        found = self._find(kid, algorithm)
        if found is None and self._keys:
            await self._attempts.run(partial(self._fetch, reason="unknown key"))
            found = self._find(kid, algorithm)
        if not self._keys:
            raise AuthorizationServerUnavailable("no key of the issuer could be fetched")
        return found

    def _find(self, kid: str | None, algorithm: str) -> PyJWK | None:
        usable = [
            key
            for key in self._keys
            if key.use in (None, "sig") and key.algorithm in (None, algorithm)
        ]
        if kid is not None:
            return next((key.jwk for key in usable if key.kid == kid), None)
        return usable[0].jwk if len(usable) == 1 else None

    def _refresh_behind(self) -> None:
        if self._refreshing or self._attempts.under_way or not self._attempts.may_start():
            return
        self._refreshing = True
        self._client.start_soon(self._refresh)

    async def _refresh(self) -> None:
        try:
            await self._attempts.run(partial(self._fetch, reason="aged"))
        finally:
            self._refreshing = False

    async def _fetch(self, *, reason: str) -> None:
        try:
            with within(FETCH_SECONDS):
                keys = await self._fetch_keys()
        except AuthorizationServerUnavailable as failure:
            log.warning("oauth.keys_unavailable", reason=reason, failure=str(failure))
            return
        self._keys = keys
        self._fetched_at = self._clock()

    async def _fetch_keys(self) -> list[_Key]:
        if self._configured is not None:
            return _keys_of(await self._client.get(self._configured))
        known = self._discovered
        if known is None or self._clock() - known[1] >= METADATA_SECONDS:
            return _keys_of(await self._client.get(await self._discover(known)))
        try:
            return _keys_of(await self._client.get(known[0]))
        except AddressMoved:
            return _keys_of(await self._client.get(await self._discover(None)))

    async def _discover(self, known: tuple[str, float] | None) -> str:
        """The key set's address the issuer's metadata names; the one `known` while the
        metadata cannot be read."""
        try:
            metadata = await issuer_metadata(self._client, self._issuer)
        except AuthorizationServerUnavailable:
            if known is None:
                raise
            return known[0]
        address = published_address(metadata, "jwks_uri")
        self._discovered = (address, self._clock())
        return address
