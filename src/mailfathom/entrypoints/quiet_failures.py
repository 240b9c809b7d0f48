"""A request whose handling failed is answered 500 and logged by code and kind alone.

Left to the server, the failure would be logged with its traceback, and an error's text may
carry what the request was about: a message's words in a raised value, an address in an
argument. Every listener (the MCP endpoint, the console) logs the stable code 54001 and the
error's class name, nothing else, and answers with a fixed sentence of its own. A failure
after the answer began cannot be answered again: the connection is left to end."""

from __future__ import annotations

from collections.abc import Callable

import structlog
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mailfathom.domain.codes import Code

log = structlog.get_logger("mailfathom.http")

FailureAnswer = Callable[[Scope], Response]


class QuietFailures:
    """ASGI middleware: `answer` builds the 500 for a request, `event` names the log line."""

    def __init__(self, app: ASGIApp, *, answer: FailureAnswer, event: str) -> None:
        self.app = app
        self._answer = answer
        self._event = event

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracking)
        except Exception as error:
            log.error(self._event, code=int(Code.UNDIAGNOSED), error=type(error).__name__)
            if not started:
                await self._answer(scope)(scope, receive, send)
