"""Reading what an authorization server publishes: its metadata, its keys, and its answer
about a token.

Every answer is bounded in size and time, and nothing from it (nor the address asked) is
repeated in an error, since the server is reached with a token in hand: a failure says only
that the server could not be used. Redirects are not followed, so nothing sent to the
configured address reaches any other.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx2

from mailfathom.domain.web_addresses import is_secure_address

MAX_ANSWER_OCTETS = 512 * 1024
_TIMEOUT = httpx2.Timeout(10.0)


class AuthorizationServerUnavailable(Exception):
    """An authorization server did not give a usable answer: unreachable, an error status,
    too large, or not a JSON object."""


class AuthorizationServerClient:
    """One HTTP client for every request to the configured authorization servers, opened on
    first use (inside the event loop that serves requests) and closed with the app."""

    def __init__(self) -> None:
        self._client: httpx2.AsyncClient | None = None

    def _http(self) -> httpx2.AsyncClient:
        if self._client is None:
            self._client = httpx2.AsyncClient(timeout=_TIMEOUT, follow_redirects=False)
        return self._client

    async def get(self, url: str) -> dict[str, Any]:
        return await self._json("GET", url)

    async def post_form(
        self, url: str, form: Mapping[str, str], basic: tuple[str, str]
    ) -> dict[str, Any]:
        return await self._json("POST", url, data=dict(form), auth=httpx2.BasicAuth(*basic))

    async def _json(self, method: str, url: str, **options: Any) -> dict[str, Any]:
        headers = {"Accept": "application/json"}
        try:
            async with self._http().stream(method, url, headers=headers, **options) as answer:
                if answer.status_code != 200:
                    raise AuthorizationServerUnavailable(f"HTTP status {answer.status_code}")
                body = bytearray()
                async for chunk in answer.aiter_bytes():
                    body.extend(chunk)
                    if len(body) > MAX_ANSWER_OCTETS:
                        raise AuthorizationServerUnavailable("the answer is too large")
        except httpx2.HTTPError:
            raise AuthorizationServerUnavailable("the server could not be reached") from None
        try:
            document = json.loads(bytes(body))
        except (ValueError, RecursionError):
            raise AuthorizationServerUnavailable("the answer is not JSON") from None
        if not isinstance(document, dict):
            raise AuthorizationServerUnavailable("the answer is not a JSON object")
        return document

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None


def metadata_addresses(issuer: str) -> list[str]:
    """Where an issuer's metadata may be published, in the order they are asked: RFC 8414
    section 3.1 (the well-known segment before the issuer's path), OpenID Connect Discovery
    section 4 (after it), and the RFC 8414 form of the OpenID document."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")

    def at(well_known: str) -> str:
        return urlunsplit((parts.scheme, parts.netloc, well_known, "", ""))

    addresses = [
        at(f"/.well-known/oauth-authorization-server{path}"),
        at(f"{path}/.well-known/openid-configuration"),
        at(f"/.well-known/openid-configuration{path}"),
    ]
    return list(dict.fromkeys(addresses))


async def issuer_metadata(client: AuthorizationServerClient, issuer: str) -> dict[str, Any]:
    """The metadata `issuer` publishes about itself. A document naming another issuer is not
    this server's (RFC 8414 section 3.3) and is passed over."""
    for address in metadata_addresses(issuer):
        try:
            document = await client.get(address)
        except AuthorizationServerUnavailable:
            continue
        if document.get("issuer") == issuer:
            return document
    raise AuthorizationServerUnavailable("no metadata naming the issuer was found")


def published_address(metadata: Mapping[str, Any], key: str) -> str:
    """An address the metadata names under `key`, held to the rule configured addresses are
    held to (https, or http on loopback)."""
    value = metadata.get(key)
    if not isinstance(value, str) or not is_secure_address(value):
        raise AuthorizationServerUnavailable(f"the metadata names no usable {key}")
    return value
