"""The console's live stream, `/live`: server-sent events telling an open page that what it
shows may have changed, so its script asks for the page again (static/live.js).

Server-sent events rather than polling: an alert raised in this process reaches every open
page at once, and an idle page costs one open connection and a read of the store's mark a
second, not a request a second per tab. The stream carries no mail, address or count, only
`changed` (and `ended` once the visit is signed out); nothing of it is logged.

Bounded: a signed-in session holds at most `STREAMS_PER_SESSION` streams and the console
`STREAMS_OVERALL`; past that a stream is refused (429). An idle stream sends a comment every
`HEARTBEAT_SECONDS`, so a proxy keeps it and a vanished client is noticed. A stream ends at
sign-out (within `STORE_SLICE`) and when the server stops (`closing`, set by
`serving.ConsoleServer` before it waits for open connections to close)."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Hashable
from typing import Protocol

import anyio
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from mailfathom.app.console.live import ConsoleNews
from mailfathom.app.console.ports import ConsoleSession
from mailfathom.entrypoints.console.refusals import forbidden, too_many_live

STORE_SLICE = 1.0  # how often an open stream reads the store's mark
WAKE_SLICE = 0.25  # how long a stream waits without looking at wake-ups and `closing`
HEARTBEAT_SECONDS = 15.0
RETRY_MILLISECONDS = 5000  # how long a browser waits before it reconnects a broken stream
STREAMS_PER_SESSION = 6
STREAMS_OVERALL = 32

CHANGED = b"event: changed\ndata: changed\n\n"
ENDED = b"event: ended\ndata: signed-out\n\n"
HEARTBEAT = b": idle\n\n"


class SessionReader(Protocol):
    async def session(self, request: Request) -> ConsoleSession | None: ...

    def token(self, request: Request) -> str | None: ...


class _Stream(StreamingResponse):
    """A stream that gives its place back however it ends (the client went, the visit was
    signed out, the server stops)."""

    def __init__(self, body: AsyncIterator[bytes], release: Callable[[], None]) -> None:
        super().__init__(
            body,
            media_type="text/event-stream",
            headers={"X-Accel-Buffering": "no"},
        )
        self._release = release

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._release()


class LivePages:
    def __init__(
        self, pages: SessionReader, news: Callable[[], ConsoleNews], closing: threading.Event
    ) -> None:
        self._pages = pages
        self._news = news()
        self._closing = closing
        self._lock = threading.Lock()
        self._wakes = 0
        self._open: Counter[str] = Counter()
        self._news.listen(self._wake)

    def routes(self) -> list[Route]:
        return [Route("/live", self.stream, methods=["GET"])]

    def _wake(self) -> None:
        with self._lock:
            self._wakes += 1

    def _woken(self) -> int:
        with self._lock:
            return self._wakes

    async def stream(self, request: Request) -> Response:
        session = await self._pages.session(request)
        if session is None:
            return forbidden(request)
        key = session.token_hash
        if self._open[key] >= STREAMS_PER_SESSION or self._open.total() >= STREAMS_OVERALL:
            return too_many_live(request, RETRY_MILLISECONDS // 1000)
        self._open[key] += 1

        def release() -> None:
            self._open[key] -= 1
            if self._open[key] <= 0:
                del self._open[key]

        token = self._pages.token(request)
        try:
            # Read before the answer starts: the page asks for itself again once the stream
            # opens, so a change after this read is told and one before it is on that page.
            woken = self._woken()
            seen: Hashable = await run_in_threadpool(self._news.look, token)
        except BaseException:
            release()
            raise
        return _Stream(self._events(token, seen, woken), release)

    async def _events(self, token: str | None, seen: Hashable, woken: int) -> AsyncIterator[bytes]:
        yield f"retry: {RETRY_MILLISECONDS}\n\n".encode()
        read_at = said_at = time.monotonic()
        while seen is not None and not self._closing.is_set():
            await anyio.sleep(WAKE_SLICE)
            now = time.monotonic()
            if woken != self._woken() or now - read_at >= STORE_SLICE:
                woken, read_at = self._woken(), now
                mark = await run_in_threadpool(self._news.look, token)
                if mark is None:
                    yield ENDED
                    return
                if mark != seen:
                    seen, said_at = mark, now
                    yield CHANGED
                    continue
            if now - said_at >= HEARTBEAT_SECONDS:
                said_at = now
                yield HEARTBEAT
        if seen is None:
            yield ENDED
