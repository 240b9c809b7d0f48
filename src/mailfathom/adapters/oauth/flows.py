"""Asking a person for access to their mail account, and receiving the grant.

Both flows suit a program installed on the operator's machine, which keeps no secret worth
the name (RFC 8252 section 8.5):

- the device authorization grant (RFC 8628): the person is shown a short code and a page to
  type it on, on any device; meanwhile the token endpoint is asked at the server's `interval`
  (five seconds more after each `slow_down`, section 3.5) until it grants, or answers
  `access_denied` or `expired_token` (Microsoft: `authorization_declined`,
  `bad_verification_code`), or the code's own lifetime has passed. The server is
  not trusted to be careful: its answer is read only up to a bound, its lifetime and
  interval are held to at most thirty minutes and one minute, the page must be https (http
  only on loopback) and the page and code printable ASCII, since both are written to the
  person's terminal; a few server errors or lost connections in a row while waiting are
  waited past, each wait twice the one before (section 3.5);
- the loopback redirect (RFC 8252 section 7.3): the person's browser is sent to the
  authorization endpoint and comes back to a one-shot listener on 127.0.0.1, with `state`
  checked (RFC 6749 section 10.12) and the code bound to this process by PKCE (RFC 7636,
  S256), so a code seen by anyone else on the machine cannot be redeemed.

Either ends in a token response that must carry a refresh token: without one the access
would end with the first access token, so it is refused (72008) rather than written down.
Nothing here prints or logs a token, a code, or what a server wrote beside an error's name.
"""

from __future__ import annotations

import hmac
import re
import secrets
import ssl
import time
import webbrowser
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import httpx2
from authlib.common.security import generate_token
from authlib.oauth2.rfc6749.parameters import prepare_grant_uri
from authlib.oauth2.rfc7636 import create_s256_code_challenge

from mailfathom.adapters.http_answers import bounded_body, json_object
from mailfathom.adapters.oauth.discovery import require_secure
from mailfathom.adapters.oauth.endpoint import (
    AUTHORIZATION_CODE_GRANT,
    DEVICE_CODE_GRANT,
    MAX_RESPONSE_OCTETS,
    TokenEndpoint,
    TokenResponse,
)
from mailfathom.adapters.oauth.loopback_listener import LoopbackListener
from mailfathom.domain.codes import CheckCode, CommandCode
from mailfathom.domain.errors import GrantFailed, TokenEndpointUnreachable, TokenRefused
from mailfathom.domain.web_addresses import endpoint_problem

_TIMEOUT = httpx2.Timeout(30.0)
_ERROR_NAME = re.compile(r"[a-z0-9_]{1,64}")
_SLOW_DOWN_STEP = 5.0
LONGEST_DEVICE_CODE_SECONDS = 1800
LONGEST_INTERVAL_SECONDS = 60
# Failures in a row (a server error, a lost connection) after which the wait is given up.
TRANSIENT_FAILURES = 4
_USER_CODE_LIMIT = 64
# RFC 8628 section 3.5 names, and those Microsoft's device flow answers instead.
_DECLINED = frozenset({"access_denied", "authorization_declined"})
_EXPIRED = frozenset({"expired_token", "bad_verification_code"})
LOOPBACK_WAIT_SECONDS = 600.0


@dataclass(frozen=True, slots=True)
class OAuthClient:
    """The client the operator registered with the provider, and what it asks for."""

    client_id: str
    scopes: tuple[str, ...]
    client_secret: str | None = field(default=None, repr=False)


@dataclass(frozen=True, slots=True)
class DevicePrompt:
    """What the person is shown (RFC 8628 section 3.3): the code to type and where.
    `verification_uri_complete` already carries the code, for a link or a QR code."""

    user_code: str
    verification_uri: str
    verification_uri_complete: str | None
    expires_in: int


@dataclass(frozen=True, slots=True)
class Grant:
    """What a person's grant yields: the refresh token to keep, and a first access token."""

    refresh_token: str = field(repr=False)
    access_token: str = field(repr=False)
    expires_in: float | None


def _error_name(value: object) -> str:
    """An RFC 6749 error name fit to repeat; a server's free text never is."""
    if isinstance(value, str) and _ERROR_NAME.fullmatch(value):
        return value
    return "an error without an RFC 6749 name"


def _refused(error: object, asking: str) -> GrantFailed:
    return GrantFailed(
        f"The authorization server refused {asking}: {_error_name(error)}.",
        code=int(CheckCode.AUTHORIZATION_REQUEST_REFUSED),
    )


def _unreachable(what: str) -> GrantFailed:
    return GrantFailed(
        f"The authorization server's {what} could not be reached, or did not answer as "
        "OAuth 2.0 describes.",
        code=int(CheckCode.AUTHORIZATION_SERVER_UNREACHABLE),
    )


def _grant(response: TokenResponse) -> Grant:
    if not response.refresh_token:
        raise GrantFailed(
            "The authorization server granted access without a refresh token, so the access "
            "could not be kept. Check that the client may be granted offline access (see "
            "docs/oauth-providers.md).",
            code=int(CheckCode.AUTHORIZATION_REQUEST_REFUSED),
        )
    return Grant(response.refresh_token, response.access_token, response.expires_in)


def _redeem(
    tokens: TokenEndpoint | None,
    token_endpoint: str,
    client: OAuthClient,
    grant_type: str,
    params: Mapping[str, str],
) -> TokenResponse:
    """One token request, on `tokens` or on an endpoint client made for it."""
    own = tokens or TokenEndpoint()
    try:
        return own.request(
            token_endpoint,
            grant_type=grant_type,
            client_id=client.client_id,
            client_secret=client.client_secret,
            params=params,
        )
    finally:
        if tokens is None:
            own.close()


def _printable(text: str, limit: int) -> bool:
    """Whether `text` may be written to a terminal as it is: printable ASCII, one line."""
    return 0 < len(text) <= limit and text.isascii() and text.isprintable()


def _page(value: object) -> bool:
    return isinstance(value, str) and _printable(value, 2048) and endpoint_problem(value) is None


def _post_device_authorization(endpoint: str, form: Mapping[str, str]) -> tuple[int, bytes | None]:
    try:
        with (
            httpx2.Client(
                timeout=_TIMEOUT, verify=ssl.create_default_context(), follow_redirects=False
            ) as http,
            http.stream(
                "POST", endpoint, data=form, headers={"Accept": "application/json"}
            ) as response,
        ):
            return response.status_code, bounded_body(response, MAX_RESPONSE_OCTETS)
    except httpx2.HTTPError:
        raise _unreachable("device authorization endpoint") from None


def _start_device_authorization(
    endpoint: str, client: OAuthClient
) -> tuple[str, DevicePrompt, float]:
    form = {"client_id": client.client_id, "scope": " ".join(client.scopes)}
    if client.client_secret is not None:
        form["client_secret"] = client.client_secret
    status, raw = _post_device_authorization(endpoint, form)
    answer = json_object(raw)
    if answer is None:
        raise _unreachable("device authorization endpoint")
    if status != 200:
        if "error" in answer:
            raise _refused(answer["error"], "the device authorization request")
        raise _unreachable("device authorization endpoint")
    # Google's endpoint names the page `verification_url`, as drafts of RFC 8628 did.
    uri = answer.get("verification_uri", answer.get("verification_url"))
    complete = answer.get("verification_uri_complete")
    device_code, user_code = answer.get("device_code"), answer.get("user_code")
    expires_in, interval = answer.get("expires_in"), answer.get("interval", 5)
    if not (
        isinstance(device_code, str)
        and isinstance(user_code, str)
        and _printable(user_code, _USER_CODE_LIMIT)
        and isinstance(uri, str)
        and _page(uri)
        and isinstance(expires_in, int)
        and expires_in > 0
        and isinstance(interval, int)
        and (complete is None or (isinstance(complete, str) and _page(complete)))
    ):
        raise _unreachable("device authorization endpoint")
    lifetime = min(expires_in, LONGEST_DEVICE_CODE_SECONDS)
    prompt = DevicePrompt(user_code, uri, complete, lifetime)
    return device_code, prompt, float(min(max(interval, 1), LONGEST_INTERVAL_SECONDS))


def device_grant(
    device_endpoint: str,
    token_endpoint: str,
    client: OAuthClient,
    show: Callable[[DevicePrompt], None],
    *,
    sleep: Callable[[float], None] = time.sleep,
    tokens: TokenEndpoint | None = None,
) -> Grant:
    """Run the device authorization grant. Raises `GrantFailed`: 11016 the person declined,
    11017 the code expired unapproved, 72007 a server could not be reached (the token
    endpoint: `TRANSIENT_FAILURES` times in a row) or gave an answer unfit to use or show,
    72008 it refused the client or granted no refresh token."""
    require_secure(device_endpoint, "the device authorization endpoint")
    require_secure(token_endpoint, "the token endpoint")
    device_code, prompt, interval = _start_device_authorization(device_endpoint, client)
    show(prompt)
    deadline = time.monotonic() + prompt.expires_in
    failures = 0
    while True:
        sleep(max(interval, min(interval * 2**failures, LONGEST_INTERVAL_SECONDS)))
        if time.monotonic() >= deadline:
            break
        try:
            response = _redeem(
                tokens, token_endpoint, client, DEVICE_CODE_GRANT, {"device_code": device_code}
            )
        except TokenEndpointUnreachable:
            failures += 1
            if failures >= TRANSIENT_FAILURES:
                raise _unreachable("token endpoint") from None
            continue
        except TokenRefused as refusal:
            failures = 0
            if refusal.error == "authorization_pending":
                continue
            if refusal.error == "slow_down":
                interval += _SLOW_DOWN_STEP
                continue
            if refusal.error in _DECLINED:
                raise _denied() from None
            if refusal.error in _EXPIRED:
                break
            raise _refused(refusal.error, "the device code's redemption") from None
        return _grant(response)
    raise GrantFailed(
        "The code shown was not approved before it expired; nothing was written.",
        code=int(CommandCode.GRANT_EXPIRED),
    )


def _denied() -> GrantFailed:
    return GrantFailed(
        "Access was declined at the provider; nothing was written.",
        code=int(CommandCode.GRANT_DENIED),
    )


@dataclass(frozen=True, slots=True)
class LoopbackRequest:
    """One authorization request: where the browser goes, and what the answer must match."""

    url: str
    redirect_uri: str
    state: str = field(repr=False)
    code_verifier: str = field(repr=False)


def authorization_request(
    authorization_endpoint: str,
    client: OAuthClient,
    redirect_uri: str,
    extra: Mapping[str, str],
) -> LoopbackRequest:
    """A fresh `state` and PKCE verifier (RFC 7636 section 4.1: 43 to 128 characters of the
    unreserved set), and the authorization URL carrying the S256 challenge."""
    state = secrets.token_urlsafe(32)
    verifier = generate_token(64)
    url = prepare_grant_uri(
        authorization_endpoint,
        client.client_id,
        "code",
        redirect_uri=redirect_uri,
        scope=list(client.scopes),
        state=state,
        code_challenge=create_s256_code_challenge(verifier),
        code_challenge_method="S256",
        **extra,
    )
    return LoopbackRequest(url, redirect_uri, state, verifier)


def loopback_grant(
    authorization_endpoint: str,
    token_endpoint: str,
    client: OAuthClient,
    show: Callable[[str], None],
    *,
    redirect_host: str = "127.0.0.1",
    open_browser: bool = False,
    extra: Mapping[str, str] | None = None,
    wait_seconds: float = LOOPBACK_WAIT_SECONDS,
    tokens: TokenEndpoint | None = None,
) -> Grant:
    """Run the authorization code grant through the browser and a loopback listener.
    `redirect_host` is how the redirect URI names the listener (`localhost` where the
    provider registers only that name). `show` is given the authorization URL, which is
    always shown; the browser is opened as well when `open_browser`. Raises `GrantFailed`:
    11016 declined, 11017 no answer within `wait_seconds` (an answer with another `state` is
    refused by the listener, which goes on waiting), 11018 an answer without a code, 72007
    or 72008 as `device_grant`."""
    require_secure(authorization_endpoint, "the authorization endpoint")
    require_secure(token_endpoint, "the token endpoint")
    with LoopbackListener() as listener:
        request = authorization_request(
            authorization_endpoint,
            client,
            f"http://{redirect_host}:{listener.port}",
            extra or {},
        )
        listener.expect(request.state)
        show(request.url)
        if open_browser:
            webbrowser.open(request.url)
        arrived = listener.wait(wait_seconds)
    if arrived is None:
        raise GrantFailed(
            "No answer came back from the browser in time; nothing was written.",
            code=int(CommandCode.GRANT_EXPIRED),
        )
    params = arrived.params
    if not hmac.compare_digest(params.get("state", "").encode(), request.state.encode()):
        raise GrantFailed(
            "The browser came back with an answer this command did not ask for; it was "
            "not used and nothing was written.",
            code=int(CommandCode.GRANT_REDIRECT_NOT_RECOGNIZED),
        )
    if "error" in params:
        if params["error"] == "access_denied":
            raise _denied()
        raise _refused(params["error"], "the authorization request")
    code = params.get("code")
    if not code:
        raise GrantFailed(
            "The browser came back without an authorization code; nothing was written.",
            code=int(CommandCode.GRANT_REDIRECT_NOT_RECOGNIZED),
        )
    params = {
        "code": code,
        "redirect_uri": request.redirect_uri,
        "code_verifier": request.code_verifier,
    }
    try:
        return _grant(_redeem(tokens, token_endpoint, client, AUTHORIZATION_CODE_GRANT, params))
    except TokenRefused as refusal:
        raise _refused(refusal.error, "the authorization code's redemption") from None
    except TokenEndpointUnreachable:
        raise _unreachable("token endpoint") from None
