"""The answers to a request the endpoint does not serve, as RFC 6750 section 3 and the MCP
authorization specification describe them.

401 without an error code says no credential was presented (none, or in a scheme the
endpoint does not take: RFC 6750 section 3.1), and points at the protected resource
metadata, where a client finds whom to ask for a token. 401 `invalid_token` says a presented
key or token does not hold; a client may drop it, which is why it is never said to a
request that presented nothing. 403 `insufficient_scope` says the token is good but lacks a
scope the endpoint requires, and names every required one (a client asks for them beside
those it holds), so it may ask the person again for more (step-up authorization). 403
without a challenge says the token's holder is not admitted at all, which no new token of
the same person changes. 503 says the authorization server could not be asked, which is no
fault of the token, or that the store could not be asked about a key created in the
console. 413 says a request body was larger than the endpoint reads (`body_bound`). Every
description is a fixed sentence of this project's own.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from starlette.responses import Response

RETRY_AFTER_SECONDS = 30


def _answer(status: int, error: str | None, description: str, challenge: str | None) -> Response:
    document = {"error": error} if error is not None else {}
    body = json.dumps({**document, "error_description": description}).encode()
    headers = {"WWW-Authenticate": challenge} if challenge is not None else {}
    if status == 503:
        headers["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return Response(body, status_code=status, media_type="application/json", headers=headers)


def credential_required(metadata_url: str | None = None) -> Response:
    challenge = "Bearer"
    if metadata_url is not None:
        challenge += f' resource_metadata="{metadata_url}"'
    return _answer(401, None, "Authentication required", challenge)


def invalid_token(metadata_url: str | None = None) -> Response:
    challenge = 'Bearer error="invalid_token"'
    if metadata_url is not None:
        challenge += f', resource_metadata="{metadata_url}"'
    return _answer(401, "invalid_token", "The credential presented is not valid", challenge)


def insufficient_scope(metadata_url: str, scopes: Sequence[str]) -> Response:
    challenge = 'Bearer error="insufficient_scope"'
    if scopes:
        challenge += f', scope="{" ".join(scopes)}"'
    challenge += f', resource_metadata="{metadata_url}"'
    description = "The token lacks a scope this endpoint requires"
    return _answer(403, "insufficient_scope", description, challenge)


def not_admitted() -> Response:
    description = "No caller entry of this endpoint admits the token's subject"
    return _answer(403, "access_denied", description, None)


def unavailable() -> Response:
    description = "The authorization server could not be asked about the token"
    return _answer(503, "temporarily_unavailable", description, None)


def too_large() -> Response:
    description = "The request body is larger than this endpoint reads"
    return _answer(413, None, description, None)


def not_checked() -> Response:
    description = "The credential could not be checked at the moment"
    return _answer(503, "temporarily_unavailable", description, None)


def failed() -> Response:
    description = "The request could not be answered; the server log records why by code"
    return _answer(500, "server_error", description, None)
