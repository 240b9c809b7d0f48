"""How the console answers a form it does not act on, before anything is done.

A form whose session ended (expired, signed out, or never signed in) is no attack: the owner
left a page open. It leads back to the sign-in page, which says so in the page's language. A
form from another origin, or whose CSRF token is not its session's, is refused (403) with a
page in that language saying nothing was done: never which check failed."""

from __future__ import annotations

from typing import Protocol

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from mailfathom.app.console.ports import ConsoleSession
from mailfathom.app.console.signing_in import csrf_holds
from mailfathom.entrypoints.console.guards import from_own_origin
from mailfathom.entrypoints.console.wording import ConsoleWording

EXPIRED_QUERY = "expired"
"""The sign-in page's query parameter asking it to say the session ended."""


class RefusingPages(Protocol):
    def page(
        self, request: Request, name: str, status: int = 200, **values: object
    ) -> Response: ...

    def wording(self, request: Request) -> ConsoleWording: ...

    def lang_query(self, request: Request) -> str: ...

    async def session(self, request: Request) -> ConsoleSession | None: ...


def session_ended(pages: RefusingPages, request: Request) -> Response:
    """To the sign-in page, which says the session ended and nothing was done."""
    query = pages.lang_query(request)
    joined = f"{query}&{EXPIRED_QUERY}=1" if query else f"?{EXPIRED_QUERY}=1"
    return RedirectResponse("/login" + joined, status_code=303)


def form_refused(pages: RefusingPages, request: Request) -> Response:
    """403, with a page saying the form was not accepted and nothing was done."""
    return pages.page(request, "refused.html", 403, heading=pages.wording(request).form_refused)


async def posted_form(
    pages: RefusingPages, request: Request, max_fields: int, max_part_size: int
) -> tuple[ConsoleSession, FormData] | Response:
    """The signed-in session and form of a POST from the console's own origin carrying the
    session's CSRF token; otherwise the answer to give, nothing done."""
    if not from_own_origin(request):
        return form_refused(pages, request)
    session = await pages.session(request)
    if session is None:
        return session_ended(pages, request)
    form = await request.form(max_files=0, max_fields=max_fields, max_part_size=max_part_size)
    csrf = form.get("csrf")
    if not csrf_holds(session, csrf if isinstance(csrf, str) else None):
        return form_refused(pages, request)
    return session, form
