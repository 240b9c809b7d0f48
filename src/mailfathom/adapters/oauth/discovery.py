"""Finding an authorization server's endpoints from its issuer identifier alone.

A `generic-oauth` account names only its issuer; the endpoints come from the server's own
metadata. That is read from the RFC 8414 well-known URI first (section 3.1: the well-known
path inserted before the issuer's path) and, where the server publishes nothing there, from
OpenID Connect discovery (`/.well-known/openid-configuration` appended to the issuer), which
many identity providers offer instead. What is read is checked by authlib's RFC 8414 rules
(arrays where arrays belong, the fields the RFC requires) and by the project's own rule for
every endpoint (`domain/web_addresses.py`: `https`, or `http` on a loopback host as RFC 8252
section 7.3 allows), which, unlike authlib's, no environment variable loosens. Its `issuer`
must equal the issuer asked for, character for
character (RFC 8414 section 3.3): metadata naming another issuer is never used, since its
endpoints would receive the person's grant.
"""

from __future__ import annotations

import json
import ssl
from dataclasses import dataclass

import httpx2
from authlib.oauth2.rfc8414 import AuthorizationServerMetadata, get_well_known_url

from mailfathom.adapters.http_answers import bounded_body
from mailfathom.domain.codes import CheckCode
from mailfathom.domain.errors import GrantFailed
from mailfathom.domain.web_addresses import endpoint_problem

_TIMEOUT = httpx2.Timeout(15.0)
_LARGEST = 256 * 1024


@dataclass(frozen=True, slots=True)
class ServerEndpoints:
    """Where a grant is asked for and redeemed. `device_authorization_endpoint` (RFC 8628
    section 4) and `authorization_endpoint` are None where the server offers no such flow."""

    issuer: str
    token_endpoint: str
    authorization_endpoint: str | None
    device_authorization_endpoint: str | None
    revocation_endpoint: str | None


def _unusable(why: str) -> GrantFailed:
    return GrantFailed(
        f"The authorization server's metadata cannot be used: {why}.",
        code=int(CheckCode.AUTHORIZATION_METADATA_UNUSABLE),
    )


def require_secure(url: str, what: str) -> None:
    """Refuse an endpoint a grant would travel to unprotected, whatever the environment
    says (authlib's own check gives way to `AUTHLIB_INSECURE_TRANSPORT`)."""
    if endpoint_problem(url) is not None:
        raise _unusable(f"{what} must use https (http only on a loopback host)")


def _fetch(client: httpx2.Client, url: str) -> dict[str, object] | None:
    """The JSON object at `url`, or None where the server has no document there. The body
    is read only up to its bound: a larger one is not metadata."""
    try:
        with client.stream("GET", url, headers={"Accept": "application/json"}) as response:
            status = response.status_code
            raw = bounded_body(response, _LARGEST) if status == 200 else b""
    except httpx2.HTTPError:
        raise GrantFailed(
            "The authorization server could not be reached for its metadata.",
            code=int(CheckCode.AUTHORIZATION_SERVER_UNREACHABLE),
        ) from None
    if status in (404, 410):
        return None
    if status != 200:
        raise _unusable(f"its metadata was answered with HTTP status {status}")
    if raw is None:
        raise _unusable("the metadata document is larger than 256 KiB")
    try:
        document = json.loads(raw)
    except ValueError:
        raise _unusable("the metadata is not JSON") from None
    if not isinstance(document, dict):
        raise _unusable("the metadata is not a JSON object")
    return document


def _candidates(issuer: str) -> list[str]:
    return [
        get_well_known_url(issuer, external=True),
        issuer.rstrip("/") + "/.well-known/openid-configuration",
    ]


def _optional(metadata: AuthorizationServerMetadata, key: str) -> str | None:
    value = metadata.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise _unusable(f'"{key}" is not a URL')
    require_secure(value, f'"{key}"')
    return value


def discover(issuer: str) -> ServerEndpoints:
    """The endpoints `issuer` publishes. Raises `GrantFailed`: 72006 when no usable
    metadata names this issuer, 72007 when the server cannot be reached."""
    require_secure(issuer, "the issuer")
    with httpx2.Client(
        timeout=_TIMEOUT, verify=ssl.create_default_context(), follow_redirects=False
    ) as client:
        for url in _candidates(issuer):
            document = _fetch(client, url)
            if document is not None:
                break
        else:
            raise _unusable("the issuer publishes none at its RFC 8414 or OpenID well-known URI")
    metadata = AuthorizationServerMetadata(document)
    try:
        metadata.validate()
    except ValueError as broken:
        raise _unusable(str(broken).replace('"', "'")) from None
    if metadata.get("issuer") != issuer:
        raise _unusable("it names another issuer than the one given")
    token_endpoint = _optional(metadata, "token_endpoint")
    if token_endpoint is None:
        raise _unusable("it names no token endpoint")
    return ServerEndpoints(
        issuer=issuer,
        token_endpoint=token_endpoint,
        authorization_endpoint=_optional(metadata, "authorization_endpoint"),
        device_authorization_endpoint=_optional(metadata, "device_authorization_endpoint"),
        revocation_endpoint=_optional(metadata, "revocation_endpoint"),
    )
