"""The console's callers page (each configured caller entry, what it grants, its keys), the
page showing a new key once, and the recent tool calls page.

Creating a key answers the POST with the page showing it: the key is never put in a URL,
a redirect or a log line, and a browser that sends the same form again (a reload) gets no
key but a notice, because each form carries a one-use nonce. A revocation answers with a
redirect back naming the outcome (`?done=`), so a reload never repeats it."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import parse_qsl, urlencode

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from mailfathom.app.console.caller_access import CallerAccess
from mailfathom.app.console.caller_keys import (
    Admission,
    CallerView,
    KeyRefused,
    NewKey,
    Revoked,
    new_form_nonce,
)
from mailfathom.app.console.tool_calls import OUTCOMES
from mailfathom.domain import unseen
from mailfathom.domain.access import ConfirmationMode
from mailfathom.domain.api_keys import MOST_KEYS_PER_CALLER
from mailfathom.entrypoints.console.again import Again, again_href
from mailfathom.entrypoints.console.callers_wording import WORDINGS, CallersWording
from mailfathom.entrypoints.console.outbox_pages import PageMaker, _back, _decided
from mailfathom.entrypoints.console.wording import chosen_language


def _words(request: Request) -> CallersWording:
    language = chosen_language(
        request.query_params.get("lang"), request.headers.get("accept-language")
    )
    return WORDINGS[language]


def _admitted_by(view: CallerView, c: CallersWording) -> str:
    if view.admission is Admission.API_KEY:
        return c.by_file_key
    if view.admission is Admission.OAUTH and view.entry.oauth is not None:
        return c.by_oauth.format(subject=unseen.marked(view.entry.oauth.subject))
    return c.open_loopback


def _permissions(view: CallerView, c: CallersWording) -> list[str]:
    granted = view.entry.permissions
    if granted is None:
        return [c.all_permissions]
    return sorted(p.value for p in granted) or [c.no_permissions]


def _int(text: str | None) -> int | None:
    if text is None or not text.isdigit() or len(text) > 18:
        return None
    return int(text)


class CallerPages:
    def __init__(self, pages: PageMaker, access: Callable[[], CallerAccess]) -> None:
        self._pages = pages
        self._access = access

    def routes(self) -> list[Route]:
        return [
            Route("/callers", self.callers, methods=["GET"]),
            Route("/callers/{caller}/keys", self.create, methods=["POST"]),
            Route("/keys/{key_id}/revoke", self.revoke, methods=["POST"]),
            Route("/calls", self.calls, methods=["GET"]),
        ]

    async def callers(self, request: Request) -> Response:
        session = await self._pages.session(request)
        if session is None:
            return RedirectResponse("/login", status_code=303)
        listing = await run_in_threadpool(self._access().keys.listing)
        w, c = self._pages.wording(request), _words(request)
        notices = {
            Revoked.NOW.value: c.revoked_now,
            Revoked.NOT_ACTIVE.value: c.not_active,
            KeyRefused.FORM_USED.value: c.form_used,
            KeyRefused.NO_SUCH_CALLER.value: c.no_such_caller,
            KeyRefused.TOO_MANY.value: c.too_many.format(most=MOST_KEYS_PER_CALLER),
        }
        return self._pages.page(
            request,
            "callers.html",
            heading=w.callers,
            csrf=session.csrf_secret,
            signed_in=True,
            c=c,
            notice=notices.get(request.query_params.get("done", "")),
            callers=[
                (view, _admitted_by(view, c), _permissions(view, c), new_form_nonce())
                for view in listing.callers
            ],
            orphaned=listing.orphaned,
            full=c.full.format(most=MOST_KEYS_PER_CALLER),
            ask=view_asks,
            categories=sorted(category.value for category in listing.published),
        )

    async def create(self, request: Request) -> Response:
        decided = await _decided(self._pages, request)
        if isinstance(decided, Response):
            return decided
        form = await request.form()
        nonce = form.get("once")
        caller = str(request.path_params["caller"])
        made = await run_in_threadpool(
            self._access().keys.create,
            caller,
            nonce if isinstance(nonce, str) else "",
            decided.created_at,
        )
        if made is KeyRefused.SIGN_IN_AGAIN:
            return self._sign_in_again(request, Again.CREATE_KEY)
        if not isinstance(made, NewKey):
            return _back(self._pages, request, "/callers", made.value)
        w, c = self._pages.wording(request), _words(request)
        return self._pages.page(
            request,
            "key_created.html",
            heading=c.new_key,
            csrf=decided.csrf_secret,
            signed_in=True,
            c=c,
            w_callers=w.callers,
            made=made,
        )

    async def revoke(self, request: Request) -> Response:
        decided = await _decided(self._pages, request)
        if isinstance(decided, Response):
            return decided
        key_id = str(request.path_params["key_id"])
        outcome = await run_in_threadpool(self._access().keys.revoke, key_id, decided.created_at)
        if outcome is KeyRefused.SIGN_IN_AGAIN:
            return self._sign_in_again(request, Again.REVOKE_KEY)
        return _back(self._pages, request, "/callers", outcome.value)

    def _sign_in_again(self, request: Request, why: Again) -> Response:
        href = again_href(self._pages.lang_query(request), why)
        return RedirectResponse(href, status_code=303)

    async def calls(self, request: Request) -> Response:
        session = await self._pages.session(request)
        if session is None:
            return RedirectResponse("/login", status_code=303)
        query = request.query_params
        caller = query.get("caller") or None
        outcome = query.get("outcome") if query.get("outcome") in OUTCOMES else None
        shown = await run_in_threadpool(
            self._access().calls.page, _int(query.get("before")), caller, outcome
        )
        w, c = self._pages.wording(request), _words(request)
        return self._pages.page(
            request,
            "calls.html",
            heading=w.calls,
            csrf=session.csrf_secret,
            signed_in=True,
            c=c,
            shown=shown,
            chosen_caller=caller,
            chosen_outcome=outcome,
            outcomes=OUTCOMES,
            older_query=_older_query(self._pages.lang_query(request), shown.older, caller, outcome),
            first_page=query.get("before") is None,
        )


def view_asks(view: CallerView) -> bool:
    return view.entry.confirmation is ConfirmationMode.ASK


def _older_query(
    lang_query: str, older: int | None, caller: str | None, outcome: str | None
) -> str | None:
    """The query of the next older page, keeping the language and the filters."""
    if older is None:
        return None
    values = dict(parse_qsl(lang_query.lstrip("?")))
    values["before"] = str(older)
    if caller is not None:
        values["caller"] = caller
    if outcome is not None:
        values["outcome"] = outcome
    return "?" + urlencode(values)
