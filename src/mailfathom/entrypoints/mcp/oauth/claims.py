"""What an access token says, read the same way whether it came as a signed JWT (RFC 9068)
or as an introspection answer (RFC 7662).

Scopes are a space-separated `scope` string, or `scp` as a string or a list (Entra ID and
some others). The client is `client_id`, else `azp` (OpenID Connect) or `appid` (Entra ID
version 1 tokens). The audience is accepted when `aud` (a string or a list) names the
configured resource, with or without a trailing slash, or one of the configured audiences.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp.server.auth.provider import AccessToken

from mailfathom.domain.mcp_oauth import McpOAuthConfig

MAX_SCOPES = 64
_MAX_SCOPE_TEXT = 4096


def scopes_of(claims: Mapping[str, Any]) -> list[str]:
    value = claims.get("scope", claims.get("scp"))
    if isinstance(value, str) and len(value) <= _MAX_SCOPE_TEXT:
        names = value.split()
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        names = list(value)
    else:
        return []
    return list(dict.fromkeys(names))[:MAX_SCOPES]


def client_of(claims: Mapping[str, Any]) -> str:
    for key in ("client_id", "azp", "appid"):
        value = claims.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def audience_accepted(claims: Mapping[str, Any], config: McpOAuthConfig) -> bool:
    value = claims.get("aud")
    named = [value] if isinstance(value, str) else value
    if not isinstance(named, list) or not all(isinstance(v, str) for v in named):
        return False
    resource = config.resource.rstrip("/")
    return any(aud in config.audiences or aud.rstrip("/") == resource for aud in named if aud)


def access_token(token: str, claims: Mapping[str, Any], config: McpOAuthConfig) -> AccessToken:
    """The SDK's value for a token already found valid: its subject, its issuer, its scopes,
    and this endpoint as the resource it was issued for."""
    expires = claims.get("exp")
    return AccessToken(
        token=token,
        client_id=client_of(claims),
        scopes=scopes_of(claims),
        expires_at=int(expires) if isinstance(expires, int | float) else None,
        resource=config.resource,
        subject=str(claims["sub"]),
        claims={"iss": claims["iss"]},
    )
