"""A request whose handling failed is answered 500 and logged by code and kind alone.

Left to the server, the failure would be logged with its traceback, and an error's text may
carry what the request was about: a message's words in a raised value, an address in an
argument. The console logs the stable code 54001 and the error's class name, nothing else."""

from __future__ import annotations

import structlog
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mailfathom.app.confirmation.wording import Language
from mailfathom.domain.codes import Code
from mailfathom.entrypoints.console.wording import chosen_language

log = structlog.get_logger("mailfathom.console")

FAILED = {
    Language.EN: "The console could not answer this request. Nothing more was done; try again.",
    Language.CS: (
        "Konzole na tento požadavek nemohla odpovědět. Nic dalšího se nestalo; zkuste to znovu."
    ),
    Language.SK: (
        "Konzola na túto požiadavku nemohla odpovedať. Nič ďalšie sa nestalo; skúste to znova."
    ),
}


class QuietFailures:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

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
            log.error(
                "console.request_failed",
                code=int(Code.UNDIAGNOSED),
                error=type(error).__name__,
            )
            if started:
                return
            request = Request(scope)
            language = chosen_language(
                request.query_params.get("lang"), request.headers.get("accept-language")
            )
            answer = PlainTextResponse(FAILED[language], status_code=500)
            await answer(scope, receive, send)
