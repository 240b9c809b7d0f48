"""The console's answer to a request whose handling failed (see
`mailfathom.entrypoints.quiet_failures`): a fixed sentence in the visitor's language."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.types import Scope

from mailfathom.app.confirmation.wording import Language
from mailfathom.entrypoints.console.wording import chosen_language

FAILED = {
    Language.EN: "The console could not answer this request. Nothing more was done; try again.",
    Language.CS: (
        "Konzole na tento požadavek nemohla odpovědět. Nic dalšího se nestalo; zkuste to znovu."
    ),
    Language.SK: (
        "Konzola na túto požiadavku nemohla odpovedať. Nič ďalšie sa nestalo; skúste to znova."
    ),
}


def failed_answer(scope: Scope) -> Response:
    """The console's 500, in the language the request asked for."""
    request = Request(scope)
    language = chosen_language(
        request.query_params.get("lang"), request.headers.get("accept-language")
    )
    return PlainTextResponse(FAILED[language], status_code=500)
