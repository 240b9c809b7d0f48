"""What every answer of the console carries, and what every state-changing request must show.

Headers: a Content-Security-Policy that loads nothing from anywhere but the console itself
(its own script may ask the console alone, `connect-src 'self'`: a passkey ceremony's
options) and lets no other site frame it, `nosniff`, a referrer sent to the console alone, and
`no-store` on every page (a page may show what only the owner should see). `same-origin`
rather than `no-referrer`: under `no-referrer` a browser sends `Origin: null` with the
console's own forms, and the origin check below refuses them. Requests: the Host must name
the console (a DNS-rebinding page names its own), and a POST must come from the console's own
origin (`Origin`, or `Referer` where a browser sends no Origin) as well as carry its session's
CSRF token (checked by the routes, which know the session)."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mailfathom.domain.request_bounds import CEREMONY_OCTETS, FORM_OCTETS

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
PUBLIC_ORIGIN = "public_origin"
"""Where the console's application keeps its public origin, in its `state`."""


class SecurityHeaders:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        static = str(scope.get("path", "")).startswith("/static/")

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
                headers["X-Content-Type-Options"] = "nosniff"
                headers["Referrer-Policy"] = "same-origin"
                headers["X-Frame-Options"] = "DENY"
                headers["Cross-Origin-Opener-Policy"] = "same-origin"
                headers["Cross-Origin-Resource-Policy"] = "same-origin"
                headers["Cache-Control"] = "no-cache" if static else "no-store"
            await send(message)

        await self.app(scope, receive, with_headers)


def allowed_hosts(listen_host: str, public: str | None = None) -> list[str]:
    """The Host names the console answers: its listen address, the loopback names (a
    wildcard listen address is no name anyone browses to), and the public origin's host."""
    names = list(LOOPBACK_NAMES)
    if listen_host not in ("0.0.0.0", "::") and listen_host not in names:  # noqa: S104
        names.append(listen_host)
    public_host = urlsplit(public).hostname if public is not None else None
    if public_host is not None and public_host not in names:
        names.append(public_host)
    return names


def public_origin(request: Request) -> str | None:
    """The origin a proxy publishes the console at (`[Console] PublicOrigin`), or None."""
    app = request.scope.get("app")
    found = getattr(getattr(app, "state", None), PUBLIC_ORIGIN, None)
    return found if isinstance(found, str) else None


def over_https(request: Request) -> bool:
    """Whether the browser reaches the console over HTTPS: always where a public origin is
    configured (the proxy terminates TLS), otherwise only a request the listener itself
    took over TLS. No forwarded header is asked."""
    return public_origin(request) is not None or request.url.scheme == "https"


def own_origin(request: Request) -> str:
    """The console's own origin: the configured public origin, whatever the `Host` (a
    proxy may pass the browser's or the listener's), or else the one the request names."""
    public = public_origin(request)
    if public is not None:
        return public
    return f"{request.url.scheme}://{request.url.netloc}".lower()


def from_own_origin(request: Request) -> bool:
    """Whether a state-changing request names the console's own origin: its `Origin`
    header, or without one its `Referer`; neither refuses."""
    own = own_origin(request)
    origin = request.headers.get("origin")
    if origin is not None:
        return origin.lower() == own
    referer = request.headers.get("referer")
    if referer is None:
        return False
    parts = urlsplit(referer)
    return f"{parts.scheme}://{parts.netloc}".lower() == own


def body_limits(
    edit_path: re.Pattern[str],
    edit_octets: int,
    signed_in: Callable[[Request], Awaitable[bool]],
) -> Callable[[Scope], Awaitable[int]]:
    """The most a request body to a path of the console may carry: a whole message for the
    drafts' Edit form of a signed-in owner (`signed_in`, asked only there: nobody else is
    read that much), a passkey's answer for the ceremonies, a small form elsewhere."""

    async def limit(scope: Scope) -> int:
        path = str(scope.get("path", ""))
        if edit_path.fullmatch(path):
            return edit_octets if await signed_in(Request(scope)) else FORM_OCTETS
        if path.startswith("/passkeys/"):
            return CEREMONY_OCTETS
        return FORM_OCTETS

    return limit
