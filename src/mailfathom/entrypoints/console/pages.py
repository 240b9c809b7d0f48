"""The console's routes: the sign-in form, the overview, signing out, and the stylesheet.

Use cases are synchronous and argon2 is slow on purpose, so each runs in a worker thread.
Nothing a request carries (the password, tokens, the client's address) is logged."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from jinja2 import Environment, PackageLoader
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from mailfathom.app.confirmation.wording import Language
from mailfathom.app.console.caller_access import CallerAccess
from mailfathom.app.console.contact_book import ConsoleContacts
from mailfathom.app.console.live import ConsoleNews
from mailfathom.app.console.mutations import ConsoleMutations
from mailfathom.app.console.outbox import ConsoleOutbox
from mailfathom.app.console.overview import ConsoleOverview
from mailfathom.app.console.passkeys import ConsolePasskeys
from mailfathom.app.console.ports import ConsoleSession, OutboxState
from mailfathom.app.console.signing_in import (
    ConsoleAccess,
    Refused,
    SignInRefused,
    Visit,
    csrf_holds,
)
from mailfathom.app.console.sync_health import SyncHealth
from mailfathom.app.console.waiting_drafts import WaitingDrafts
from mailfathom.domain import unseen
from mailfathom.domain.account_health import HealthState
from mailfathom.domain.console import SESSION_LIFETIME_SECONDS, SIGN_IN_WINDOW_SECONDS
from mailfathom.domain.delivery_config import MailDeliveryConfig
from mailfathom.domain.request_bounds import FORM_OCTETS, edit_form_octets
from mailfathom.entrypoints.body_bound import BodyBound
from mailfathom.entrypoints.console.again import form_query, reason, returned_to
from mailfathom.entrypoints.console.again_wording import AGAIN_NOTICES
from mailfathom.entrypoints.console.callers_pages import CallerPages
from mailfathom.entrypoints.console.drafts import EDIT_PATH, DraftPages
from mailfathom.entrypoints.console.failures import failed_answer
from mailfathom.entrypoints.console.form_checks import EXPIRED_QUERY, form_refused, session_ended
from mailfathom.entrypoints.console.guards import (
    PUBLIC_ORIGIN,
    SecurityHeaders,
    allowed_hosts,
    body_limits,
    from_own_origin,
    over_https,
)
from mailfathom.entrypoints.console.health_pages import health_and_contact_routes
from mailfathom.entrypoints.console.live import LivePages
from mailfathom.entrypoints.console.live_wording import LIVE_WORDINGS
from mailfathom.entrypoints.console.outbox_pages import OutboxPages
from mailfathom.entrypoints.console.passkey_pages import (
    PasskeyPages,
    login_offer,
    passkey_hosts,
)
from mailfathom.entrypoints.console.refusals import (
    routing_refusal,
    too_large,
    too_large_for,
)
from mailfathom.entrypoints.console.wording import WORDINGS, ConsoleWording, chosen_language
from mailfathom.entrypoints.quiet_failures import QuietFailures

COOKIE = "mf_console"
SECURE_COOKIE = "__Host-mf_console"
MAX_FORM_OCTETS = FORM_OCTETS


@dataclass(frozen=True)
class ConsoleUseCases:
    """How the pages reach the use cases: each call makes them afresh (they are cheap),
    so the pages hold no state of their own."""

    access: Callable[[], ConsoleAccess]
    overview: Callable[[], ConsoleOverview]
    # The drafts waiting for the owner, and each account's display name by its identifier.
    drafts: Callable[[], WaitingDrafts] | None = None
    account_names: Callable[[], dict[str, str]] = dict
    outbox: Callable[[], ConsoleOutbox] | None = None
    mutations: Callable[[], ConsoleMutations] | None = None
    health: Callable[[], SyncHealth] | None = None
    contacts: Callable[[], ConsoleContacts] | None = None
    callers: Callable[[], CallerAccess] | None = None
    passkeys: Callable[[], ConsolePasskeys] | None = None
    # What keeps open pages current (`/live`); none: pages change only when reloaded.
    live: Callable[[], ConsoleNews] | None = None


def cookie_name(request: Request) -> str:
    """`__Host-` under HTTPS: the browser then keeps it only if Secure, host-only and on
    `/`, so no sibling host can plant one."""
    return SECURE_COOKIE if over_https(request) else COOKIE


def _set_cookie(response: Response, request: Request, visit: Visit, lasts: int) -> None:
    response.set_cookie(
        cookie_name(request),
        visit.token,
        max_age=lasts,
        path="/",
        secure=over_https(request),
        httponly=True,
        samesite="strict",
    )


class _Pages:
    def __init__(self, use_cases: ConsoleUseCases) -> None:
        self._use = use_cases
        self._templates = Environment(
            loader=PackageLoader("mailfathom.entrypoints.console", "templates"),
            autoescape=True,
            auto_reload=False,
        )
        # Text a caller or a server chose, shown with every character that renders as
        # nothing written out (`{{ value | marked }}`).
        self._templates.filters["marked"] = unseen.marked

    def _wording(self, request: Request) -> tuple[str, ConsoleWording, str]:
        query = request.query_params.get("lang")
        language = chosen_language(query, request.headers.get("accept-language"))
        lang_query = f"?lang={language.value}" if query == language.value else ""
        return language.value, WORDINGS[language], lang_query

    def _page(self, request: Request, name: str, status: int = 200, **values: Any) -> Response:
        lang, wording, lang_query = self._wording(request)
        text = self._templates.get_template(name).render(
            lang=lang,
            w=wording,
            lang_query=lang_query,
            live_w=LIVE_WORDINGS[Language(lang)] if self._use.live is not None else None,
            **values,
        )
        return HTMLResponse(text, status_code=status)

    def _token(self, request: Request) -> str | None:
        return request.cookies.get(cookie_name(request))

    def page(self, request: Request, name: str, status: int = 200, **values: Any) -> Response:
        return self._page(request, name, status, **values)

    def token(self, request: Request) -> str | None:
        return self._token(request)

    def wording(self, request: Request) -> ConsoleWording:
        return self._wording(request)[1]

    def lang_query(self, request: Request) -> str:
        return self._wording(request)[2]

    async def session(self, request: Request) -> ConsoleSession | None:
        """The signed-in session the request's cookie names, or None."""
        return await self.signed_in(request)

    async def signed_in(self, request: Request) -> ConsoleSession | None:
        """The request's signed-in session, or None."""
        return await run_in_threadpool(self._use.access().signed_in, self._token(request))

    async def is_signed_in(self, request: Request) -> bool:
        return await self.signed_in(request) is not None

    async def login_form(self, request: Request) -> Response:
        access = self._use.access()
        token = self._token(request)
        found = await run_in_threadpool(access.session, token)
        why = reason(request)
        again = None if why is None else AGAIN_NOTICES[Language(self._wording(request)[0])][why]
        if found is not None and found.signed_in:
            if again is None:
                return RedirectResponse("/", status_code=303)
            # A signed-in owner signing in again (before adding or removing a credential):
            # the form carries the session's own CSRF token, signing in replaces the
            # session and leads back to the page the owner left (`again`).
            return await self._form(request, access, found, token, again, 200)
        ended = EXPIRED_QUERY in request.query_params
        notice = self._wording(request)[1].form_expired if ended else None
        return await self._form(request, access, found, token, notice, 200)

    async def _form(
        self,
        request: Request,
        access: ConsoleAccess,
        found: ConsoleSession | None,
        token: str | None,
        notice: str | None,
        status: int,
    ) -> Response:
        password_set = await run_in_threadpool(access.password_is_set)
        offer = await login_offer(self._use.passkeys, request)
        if not password_set and not offer.held:
            notice = self._wording(request)[1].unset
        fresh: Visit | None = None
        if found is None or token is None:
            fresh = await run_in_threadpool(access.visit)
            found = fresh.session
        _, wording, lang_query = self._wording(request)
        response = self._page(
            request,
            "login.html",
            status,
            heading=wording.sign_in,
            form_query=form_query(request, lang_query),
            csrf=found.csrf_secret,
            notice=notice,
            password_set=password_set,
            signed_in=False,
            offer=offer,
        )
        if fresh is not None:
            _set_cookie(response, request, fresh, SIGN_IN_WINDOW_SECONDS)
        return response

    async def login(self, request: Request) -> Response:
        if not from_own_origin(request):
            return form_refused(self, request)
        form = await _bounded_form(request)
        if form is None:
            return too_large(request)
        csrf = form.get("csrf")
        password = form.get("password")
        access = self._use.access()
        token = self._token(request)
        client = request.client.host if request.client is not None else "unknown"
        outcome = await run_in_threadpool(
            access.sign_in,
            token,
            csrf,
            password or "",
            client[:64],
        )
        if isinstance(outcome, Visit):
            return self.signed_in_redirect(request, outcome)
        return await self._refused(request, access, token, outcome)

    async def _refused(
        self, request: Request, access: ConsoleAccess, token: str | None, refused: Refused
    ) -> Response:
        found = await run_in_threadpool(access.session, token)
        if refused.reason is SignInRefused.FORM_EXPIRED:
            # The form's session gone: a page left open. Still there: its token was wrong.
            if found is None:
                return session_ended(self, request)
            return form_refused(self, request)
        wording = self._wording(request)[1]
        if refused.reason is SignInRefused.WAIT:
            notice = wording.wait.format(seconds=refused.retry_after_seconds)
            response = await self._form(request, access, found, token, notice, 429)
            response.headers["Retry-After"] = str(refused.retry_after_seconds)
            return response
        if refused.reason is SignInRefused.UNSET:
            return await self._form(request, access, found, token, None, 403)
        return await self._form(request, access, found, token, wording.mismatch, 403)

    async def overview(self, request: Request) -> Response:
        access = self._use.access()
        session = await run_in_threadpool(access.signed_in, self._token(request))
        if session is None:
            return RedirectResponse("/login", status_code=303)
        shown = await run_in_threadpool(self._use.overview().overview)
        _, w, _ = self._wording(request)
        states = {
            None: w.healthy,
            HealthState.CONSENT_REQUIRED: w.needs_consent,
            HealthState.CREDENTIALS_REFUSED: w.login_refused,
        }
        labels = {
            OutboxState.QUEUED: w.queued,
            OutboxState.HELD: w.held,
            OutboxState.SENDING: w.sending,
            OutboxState.SENT: w.sent,
            OutboxState.REFUSED: w.refused,
            OutboxState.CANCELLED: w.cancelled,
        }
        return self._page(
            request,
            "overview.html",
            heading=w.overview,
            live_page="/",
            csrf=session.csrf_secret,
            signed_in=True,
            o=shown,
            outbox_rows=list(labels.items()),
            accounts=[(name, states[state]) for name, state in shown.accounts],
        )

    async def logout(self, request: Request) -> Response:
        if not from_own_origin(request):
            return form_refused(self, request)
        form = await _bounded_form(request)
        if form is None:
            return too_large(request)
        csrf = form.get("csrf")
        access = self._use.access()
        token = self._token(request)
        session = await run_in_threadpool(access.signed_in, token)
        if session is None:
            return session_ended(self, request)
        if not csrf_holds(session, csrf):
            return form_refused(self, request)
        await run_in_threadpool(access.sign_out, token)
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(
            cookie_name(request),
            path="/",
            secure=over_https(request),
            httponly=True,
            samesite="strict",
        )
        return response

    async def bounded_form(self, request: Request, limit: int) -> dict[str, str] | None:
        return await _bounded_form(request, limit)

    def signed_in_redirect(self, request: Request, visit: Visit) -> Response:
        """To the overview, or back to the page the owner was sent to sign in again from,
        holding the new signed-in session's cookie."""
        response = RedirectResponse(returned_to(request, self.lang_query(request)), status_code=303)
        _set_cookie(response, request, visit, SESSION_LIFETIME_SECONDS)
        return response

    async def lately(self, session: ConsoleSession) -> bool:
        """Whether `session` signed in lately enough to add a sign-in credential (the
        passkeys page offers the add form only then)."""
        return self._use.access().lately(session)

    async def login_again(self, request: Request, notice: str, status: int) -> Response:
        """The sign-in form again, with `notice`."""
        access = self._use.access()
        token = self._token(request)
        found = await run_in_threadpool(access.session, token)
        return await self._form(request, access, found, token, notice, status)


async def _bounded_form(request: Request, limit: int = MAX_FORM_OCTETS) -> dict[str, str] | None:
    """The fields of a URL-encoded form, the first value of each; None when the body is
    larger than `limit` (read no further than that)."""
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            return None
    fields = parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True)
    form: dict[str, str] = {}
    for name, value in fields:
        form.setdefault(name, value)
    return form


DEFAULT_EDIT_OCTETS = edit_form_octets(MailDeliveryConfig().max_body_characters)


def build_console_app(
    use_cases: ConsoleUseCases,
    listen_host: str,
    closing: threading.Event | None = None,
    *,
    edit_octets: int = DEFAULT_EDIT_OCTETS,
    public_origin: str | None = None,
) -> Starlette:
    """The console's application. `closing`, once set, ends the live streams: set it before
    the server waits for open connections to close (`serving.ConsoleServer` does).
    `edit_octets` bounds the drafts' Edit form (a whole
    message: see `request_bounds`); every other form is bounded far lower. With a
    `public_origin` (a proxy terminating TLS in front of the listener) that origin is the
    console's own: forms must come from it, its host is answered, cookies are `__Host-` and
    `Secure`."""
    pages = _Pages(use_cases)
    more: list[Route] = []
    if use_cases.drafts is not None:
        drafts = DraftPages(pages, use_cases.drafts, use_cases.account_names, edit_octets)
        more.extend(drafts.routes())
    if use_cases.outbox is not None and use_cases.mutations is not None:
        more.extend(OutboxPages(pages, use_cases.outbox, use_cases.mutations).routes())
    if use_cases.health is not None and use_cases.contacts is not None:
        more.extend(health_and_contact_routes(pages, use_cases.health, use_cases.contacts))
    if use_cases.callers is not None:
        more.extend(CallerPages(pages, use_cases.callers).routes())
    if use_cases.passkeys is not None:
        more.extend(PasskeyPages(pages, use_cases.passkeys).routes())
    if use_cases.live is not None:
        more.extend(LivePages(pages, use_cases.live, closing or threading.Event()).routes())
    app = Starlette(
        exception_handlers={404: routing_refusal, 405: routing_refusal},
        routes=[
            *more,
            Route("/", pages.overview, methods=["GET"]),
            Route("/login", pages.login_form, methods=["GET"]),
            Route("/login", pages.login, methods=["POST"]),
            Route("/logout", pages.logout, methods=["POST"]),
            Mount(
                "/static",
                StaticFiles(packages=[("mailfathom.entrypoints.console", "static")]),
                name="static",
            ),
        ],
        middleware=[
            Middleware(SecurityHeaders),
            Middleware(QuietFailures, answer=failed_answer, event="console.request_failed"),
            Middleware(
                BodyBound,
                limit=body_limits(EDIT_PATH, edit_octets, pages.is_signed_in),
                refusal=too_large_for,
            ),
            Middleware(
                TrustedHostMiddleware,
                allowed_hosts=allowed_hosts(listen_host, public_origin)
                + passkey_hosts(use_cases.passkeys),
            ),
        ],
    )
    setattr(app.state, PUBLIC_ORIGIN, public_origin)
    return app
