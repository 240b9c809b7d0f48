"""An ASGI middleware bounding every request body before the application reads any of it.

Starlette reads a URL-encoded form or a JSON body whole into memory (a multipart form's
part bound does not apply to either), so the bound is kept here, in front of every route:
a `Content-Length` over the bound is answered 413 without reading a byte of the body, and a
chunked body is read only up to the bound, then answered 413 as well. The application runs
only once the whole body is in hand and within the bound, so a refused request does nothing.
The refusal closes the connection, so a client still sending is stopped rather than read to
its end."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

# The answer to a request over the bound, made for that request (its language, say).
Refusal = Callable[[Scope], Response]
Limit = Callable[[Scope], Awaitable[int]]


def fixed_limit(octets: int) -> Limit:
    """The same bound for every request."""

    async def limit(_scope: Scope) -> int:
        return octets

    return limit


class BodyBound:
    """`limit(scope)` is the most octets a request may carry (asked before any of its body
    is read: its path and headers decide); `refusal` the answer to one that carries more."""

    def __init__(self, app: ASGIApp, limit: Limit, refusal: Refusal) -> None:
        self.app = app
        self._limit = limit
        self._refusal = refusal

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = await self._limit(scope)
        declared = _declared_length(scope)
        if declared is not None and declared > limit:
            await self._refuse(scope, receive, send)
            return
        body = bytearray()
        first: Message | None = None
        while True:
            message = await receive()
            if message["type"] != "http.request":
                first = message
                break
            body += message.get("body", b"")
            if len(body) > limit:
                await self._refuse(scope, receive, send)
                return
            if not message.get("more_body", False):
                first = {"type": "http.request", "body": bytes(body), "more_body": False}
                break
        given = False

        async def replayed() -> Message:
            nonlocal given
            if not given:
                given = True
                assert first is not None
                return first
            return await receive()

        await self.app(scope, replayed, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        answer = self._refusal(scope)
        answer.headers["Connection"] = "close"
        await answer(scope, receive, send)


def _declared_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name.lower() == b"content-length":
            text = value.decode("latin-1").strip()
            return int(text) if text.isdigit() else None
    return None
