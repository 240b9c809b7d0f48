"""The console's short refusals (403, 404, 405, 413, 429) in the language of the request,
as plain text: a person who follows a stale form or a wrong address reads them in the
browser, so they speak as the pages do. Nothing of the request is repeated in them."""

from __future__ import annotations

from dataclasses import dataclass

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Scope

from mailfathom.app.confirmation.wording import Language
from mailfathom.entrypoints.console.wording import chosen_language


@dataclass(frozen=True, slots=True)
class RefusalWording:
    forbidden: str
    not_found: str
    not_allowed: str
    too_large: str
    too_many_live: str


REFUSAL_WORDINGS: dict[Language, RefusalWording] = {
    Language.EN: RefusalWording(
        forbidden="Forbidden",
        not_found="Not Found",
        not_allowed="Method Not Allowed",
        too_large="Request too large",
        too_many_live="Too many live pages",
    ),
    Language.CS: RefusalWording(
        forbidden="Zakázáno",
        not_found="Nenalezeno",
        not_allowed="Metoda není povolena",
        too_large="Požadavek je příliš velký",
        too_many_live="Příliš mnoho živých stránek",
    ),
    Language.SK: RefusalWording(
        forbidden="Zakázané",
        not_found="Nenájdené",
        not_allowed="Metóda nie je povolená",
        too_large="Požiadavka je príliš veľká",
        too_many_live="Príliš veľa živých stránok",
    ),
}


def _language(request: Request) -> Language:
    return chosen_language(request.query_params.get("lang"), request.headers.get("accept-language"))


def _plain(request: Request, status: int, text: str) -> Response:
    return Response(
        text,
        status_code=status,
        media_type="text/plain",
        headers={"Content-Language": _language(request).value},
    )


def _words(request: Request) -> RefusalWording:
    return REFUSAL_WORDINGS[_language(request)]


def forbidden(request: Request) -> Response:
    return _plain(request, 403, _words(request).forbidden)


def not_found(request: Request) -> Response:
    return _plain(request, 404, _words(request).not_found)


def too_large(request: Request) -> Response:
    return _plain(request, 413, _words(request).too_large)


def too_many_live(request: Request, retry_after_seconds: int) -> Response:
    answer = _plain(request, 429, _words(request).too_many_live)
    answer.headers["Retry-After"] = str(retry_after_seconds)
    return answer


def too_large_for(scope: Scope) -> Response:
    """`too_large` for a request refused before the application sees it (`BodyBound`)."""
    return too_large(Request(scope))


async def routing_refusal(request: Request, exc: Exception) -> Response:
    """Starlette's own 404 and 405 (no such page, a method a page does not take)."""
    if isinstance(exc, HTTPException) and exc.status_code == 405:
        answer = _plain(request, 405, _words(request).not_allowed)
        answer.headers.update(exc.headers or {})
        return answer
    return not_found(request)
