"""One request to an OAuth 2.0 token endpoint (RFC 6749 section 3.2), and its answer.

Every grant a mail account uses ends here: refreshing an access token (section 6), and, when
a person grants access, exchanging a device code (RFC 8628 section 3.4) or an authorization
code (section 4.1.3). The request is a form POST; the client authenticates with
`client_secret_post` where the provider issued it a secret (section 2.3.1), and otherwise
names itself with `client_id` in the body, as a public client does.

What crosses this edge is secret both ways (the refresh token or code going out, the tokens
coming back), so nothing here logs, and no error repeats a request, a response body or a
server's description: an error names the endpoint's host and the protocol's error name only.
"""

from __future__ import annotations

import math
import re
import ssl
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx2
from authlib.oauth2.rfc6749.parameters import prepare_token_request

from mailfathom.adapters.http_answers import bounded_body, json_object
from mailfathom.domain.errors import TokenEndpointUnreachable, TokenRefused

# A token response is a few kilobytes; a larger answer is not one, and is not read further.
MAX_RESPONSE_OCTETS = 64 * 1024
DEFAULT_TIMEOUT_SECONDS = 30.0
# RFC 6749 section 5.2: error = 1*( %x20-21 / %x23-5B / %x5D-7E )
_ERROR_NAME = re.compile(r"[\x20\x21\x23-\x5b\x5d-\x7e]{1,64}")
UNRECOGNIZED_ERROR = "unrecognized"

REFRESH_GRANT = "refresh_token"
DEVICE_CODE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
AUTHORIZATION_CODE_GRANT = "authorization_code"


@dataclass(frozen=True, slots=True)
class TokenResponse:
    """A successful token response (RFC 6749 section 5.1). `expires_in` is None when the
    server did not say; `refresh_token` is set when the server issued a new one, which then
    replaces the old (section 6). `scope` is what was granted when it differs from what was
    asked."""

    access_token: str = field(repr=False)
    expires_in: float | None
    refresh_token: str | None = field(default=None, repr=False)
    scope: str | None = None


ContextFactory = Callable[[], ssl.SSLContext]


class TokenEndpoint:
    """Posts token requests; one instance is shared by every thread of a process (the
    underlying connection pool is thread-safe). Redirects are not followed: a token request
    is never repeated to another address."""

    def __init__(
        self,
        *,
        timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
        tls_context: ContextFactory = ssl.create_default_context,
    ) -> None:
        self._client = httpx2.Client(
            timeout=timeout_seconds, verify=tls_context(), follow_redirects=False
        )

    def close(self) -> None:
        self._client.close()

    def refresh(
        self,
        endpoint: str,
        *,
        client_id: str,
        client_secret: str | None,
        refresh_token: str,
        scopes: Sequence[str] = (),
    ) -> TokenResponse:
        """Exchange `refresh_token` for an access token (RFC 6749 section 6)."""
        params = {"refresh_token": refresh_token}
        if scopes:
            params["scope"] = " ".join(scopes)
        return self.request(
            endpoint,
            grant_type=REFRESH_GRANT,
            client_id=client_id,
            client_secret=client_secret,
            params=params,
        )

    def request(
        self,
        endpoint: str,
        *,
        grant_type: str,
        client_id: str,
        client_secret: str | None,
        params: Mapping[str, str],
    ) -> TokenResponse:
        """POST one grant to `endpoint`. Raises `TokenRefused` with the RFC 6749 section 5.2
        error name, or `TokenEndpointUnreachable` when no usable answer came (the network, a
        server error, an answer that is not a token response)."""
        credentials = {"client_id": client_id}
        if client_secret is not None:
            credentials["client_secret"] = client_secret
        body = prepare_token_request(grant_type, **credentials, **params)
        host = urlsplit(endpoint).hostname or "the token endpoint"
        try:
            with self._client.stream(
                "POST",
                endpoint,
                content=body.encode("ascii"),
                headers={
                    "Content-Type": "application/x-www-form-urlencoded",
                    "Accept": "application/json",
                },
            ) as response:
                status = response.status_code
                raw = bounded_body(response, MAX_RESPONSE_OCTETS)
        except httpx2.HTTPError:
            raise TokenEndpointUnreachable(
                f"The token endpoint at {host} could not be reached."
            ) from None
        return _read_answer(status, raw, host)


def _read_answer(status: int, raw: bytes | None, host: str) -> TokenResponse:
    unusable = TokenEndpointUnreachable(
        f"The token endpoint at {host} answered with something that is not a token response "
        f"(HTTP {status})."
    )
    document = json_object(raw)
    if status == 200:
        if document is None:
            raise unusable
        return _token_response(document, unusable)
    # RFC 6749 section 5.2 answers 400 (401 for a client that failed to authenticate).
    if status in (400, 401) and document is not None and "error" in document:
        error = document["error"]
        name = error if isinstance(error, str) and _ERROR_NAME.fullmatch(error) else None
        raise TokenRefused(name or UNRECOGNIZED_ERROR)
    raise unusable


def _token_response(
    document: Mapping[str, object], unusable: TokenEndpointUnreachable
) -> TokenResponse:
    access_token = document.get("access_token")
    token_type = document.get("token_type", "bearer")
    expires_in = document.get("expires_in")
    refresh_token = document.get("refresh_token")
    scope = document.get("scope")
    if (
        not isinstance(access_token, str)
        or not access_token
        or not isinstance(token_type, str)
        or token_type.lower() != "bearer"
    ):
        raise unusable
    # Some servers send the lifetime as a string of digits.
    if isinstance(expires_in, str) and expires_in.isdigit():
        expires_in = int(expires_in)
    lifetime = (
        float(expires_in)
        if isinstance(expires_in, int | float)
        and not isinstance(expires_in, bool)
        and math.isfinite(expires_in)
        else None
    )
    return TokenResponse(
        access_token=access_token,
        expires_in=lifetime if lifetime is None or lifetime >= 0 else 0.0,
        refresh_token=refresh_token if isinstance(refresh_token, str) and refresh_token else None,
        scope=scope if isinstance(scope, str) else None,
    )
