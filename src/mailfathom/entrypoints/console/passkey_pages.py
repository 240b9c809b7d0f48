"""The console's passkeys: signing in with one, enrolling the first from the machine itself,
and the page where a signed-in owner adds, lists and removes them.

A ceremony takes two requests, both POSTs from the console's own origin with the session's
CSRF token: the options (JSON, for the page's own script, `static/passkey.js`), then a plain
form carrying what the browser answered, which ends in a redirect as the password form does.
Passkeys are offered only at the origins configured for them (the browser binds a passkey to
its name); elsewhere the page says where they work, and the password form is unchanged.
Nothing of a request (tokens, the answer, the client's address) is logged."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import urlsplit

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from mailfathom.app.confirmation.wording import Language
from mailfathom.app.console.passkey_ports import Ceremony
from mailfathom.app.console.passkeys import ConsolePasskeys, Enrolled, PasskeyRefused, Step
from mailfathom.app.console.ports import ConsoleSession
from mailfathom.app.console.signing_in import Visit, csrf_holds
from mailfathom.domain import unseen
from mailfathom.domain.passkeys import MOST_PASSKEYS
from mailfathom.domain.request_bounds import CEREMONY_OCTETS
from mailfathom.entrypoints.console.again import Again, again_href
from mailfathom.entrypoints.console.again_wording import AGAIN_LINKS
from mailfathom.entrypoints.console.first_passkey_wording import (
    FIRST_PASSKEY_WORDINGS,
    FirstPasskeyWording,
)
from mailfathom.entrypoints.console.guards import (
    LOOPBACK_NAMES,
    from_own_origin,
    own_origin,
    public_origin,
)
from mailfathom.entrypoints.console.passkey_wording import PASSKEY_WORDINGS, PasskeyWording
from mailfathom.entrypoints.console.refusals import forbidden, not_found, too_large
from mailfathom.entrypoints.console.wording import ConsoleWording, chosen_language

MAX_CEREMONY_OCTETS = CEREMONY_OCTETS

FORWARDING_HEADERS = ("forwarded", "x-forwarded-for", "x-real-ip")


class PageMaker(Protocol):
    """What these pages take from the console's page set: its layout, its session, its
    bounded form reader, and its way to answer a sign-in and a refused one."""

    def page(
        self, request: Request, name: str, status: int = 200, **values: object
    ) -> Response: ...

    def wording(self, request: Request) -> ConsoleWording: ...

    def lang_query(self, request: Request) -> str: ...

    async def session(self, request: Request) -> ConsoleSession | None: ...

    def token(self, request: Request) -> str | None: ...

    async def bounded_form(self, request: Request, limit: int) -> dict[str, str] | None: ...

    def signed_in_redirect(self, request: Request, visit: Visit) -> Response: ...

    async def login_again(self, request: Request, notice: str, status: int) -> Response: ...

    async def lately(self, session: ConsoleSession) -> bool: ...


@dataclass(frozen=True, slots=True)
class PasskeyOffer:
    """What the sign-in form shows of passkeys."""

    p: PasskeyWording
    held: bool = False
    sign_in: bool = False
    enrol_first: bool = False
    elsewhere: str | None = None
    first: FirstPasskeyWording | None = None
    # How to make the first passkey possible, while nobody can sign in and no code waits.
    how_first: str | None = None


def _language(request: Request) -> Language:
    return chosen_language(request.query_params.get("lang"), request.headers.get("accept-language"))


def words(request: Request) -> PasskeyWording:
    return PASSKEY_WORDINGS[_language(request)]


def from_loopback(request: Request) -> bool:
    """Whether the visitor is on this machine: no public origin configured (behind the
    proxy it names, every visitor is the proxy), a loopback peer, a loopback name in `Host`,
    and no header a proxy adds (a proxy on this machine makes every visitor a loopback
    peer)."""
    if public_origin(request) is not None:
        return False
    peer = request.client.host if request.client is not None else ""
    try:
        loopback_peer = ipaddress.ip_address(peer).is_loopback
    except ValueError:
        return False
    named = (request.url.hostname or "").lower() in LOOPBACK_NAMES
    forwarded = any(name in request.headers for name in FORWARDING_HEADERS)
    return loopback_peer and named and not forwarded


async def login_offer(
    passkeys: Callable[[], ConsolePasskeys] | None, request: Request
) -> PasskeyOffer:
    """The passkey part of the sign-in form for this request."""
    p = words(request)
    if passkeys is None:
        return PasskeyOffer(p)
    uses = passkeys()
    held = bool(await run_in_threadpool(uses.passkeys))
    local = not held and from_loopback(request)
    first = local and await run_in_threadpool(uses.first_enrolment_open)
    if not uses.offered_at(own_origin(request)):
        elsewhere = p.elsewhere.format(origin=uses.origins[0]) if held or first else None
        return PasskeyOffer(p, held, elsewhere=elsewhere)
    f = FIRST_PASSKEY_WORDINGS[_language(request)]
    unset = local and not first and await run_in_threadpool(uses.nobody_can_sign_in)
    return PasskeyOffer(
        p, held, sign_in=held, enrol_first=first, first=f, how_first=f.how if unset else None
    )


def passkey_hosts(passkeys: Callable[[], ConsolePasskeys] | None) -> list[str]:
    """The host names of the origins passkeys are configured for: the console answers
    requests naming them (a proxy passing the name it is reached by) as well."""
    if passkeys is None:
        return []
    return [urlsplit(origin).hostname or "" for origin in passkeys().origins]


class PasskeyPages:
    def __init__(self, pages: PageMaker, passkeys: Callable[[], ConsolePasskeys]) -> None:
        self._pages = pages
        self._passkeys = passkeys

    def routes(self) -> list[Route]:
        return [
            Route("/passkeys", self.listing, methods=["GET"]),
            Route("/passkeys/options/{ceremony}", self.options, methods=["POST"]),
            Route("/passkeys/register", self.register, methods=["POST"]),
            Route("/passkeys/sign-in", self.sign_in, methods=["POST"]),
            Route("/passkeys/{credential_id}/remove", self.remove, methods=["POST"]),
        ]

    async def _step(self, request: Request) -> tuple[Step, dict[str, str]] | Response:
        """The ceremony step a POST carries; or the refusal to answer with, before anything
        is done."""
        if not from_own_origin(request):
            return forbidden(request)
        form = await self._pages.bounded_form(request, MAX_CEREMONY_OCTETS)
        if form is None:
            return too_large(request)
        step = Step(
            self._pages.token(request),
            form.get("csrf"),
            own_origin(request),
            from_loopback(request),
        )
        return step, form

    async def options(self, request: Request) -> Response:
        ceremonies = {c.value: c for c in Ceremony}
        ceremony = ceremonies.get(str(request.path_params["ceremony"]))
        if ceremony is None:
            return not_found(request)
        stepped = await self._step(request)
        if isinstance(stepped, Response):
            return stepped
        answer = await run_in_threadpool(self._passkeys().options, stepped[0], ceremony)
        if isinstance(answer, PasskeyRefused):
            return JSONResponse({"refused": answer.value}, status_code=403)
        return Response(answer, media_type="application/json")

    async def sign_in(self, request: Request) -> Response:
        stepped = await self._step(request)
        if isinstance(stepped, Response):
            return stepped
        step, form = stepped
        outcome = await run_in_threadpool(
            self._passkeys().sign_in, step, form.get("credential", "")
        )
        if isinstance(outcome, Visit):
            return self._pages.signed_in_redirect(request, outcome)
        return await self._refused(request, outcome)

    async def register(self, request: Request) -> Response:
        stepped = await self._step(request)
        if isinstance(stepped, Response):
            return stepped
        step, form = stepped
        p = words(request)
        signed_in = await self._pages.session(request) is not None
        outcome = await run_in_threadpool(
            self._passkeys().enrol,
            step,
            form.get("credential", ""),
            form.get("label", ""),
            p.fallback_label,
            form.get("code", ""),
        )
        if outcome is PasskeyRefused.SIGN_IN_AGAIN:
            return _sign_in_again(self._pages, request, Again.ADD_PASSKEY)
        if isinstance(outcome, Enrolled):
            if outcome.visit is not None:
                return self._pages.signed_in_redirect(request, outcome.visit)
            return self._back(request, "added")
        if signed_in and outcome is not PasskeyRefused.FORM_EXPIRED:
            return self._back(request, outcome.value)
        return await self._refused(request, outcome)

    async def _refused(self, request: Request, refused: PasskeyRefused) -> Response:
        if refused is PasskeyRefused.FORM_EXPIRED:
            return forbidden(request)
        return await self._pages.login_again(request, _notice(words(request), refused), 403)

    def _back(self, request: Request, done: str) -> Response:
        query = self._pages.lang_query(request)
        joined = f"{query}&done={done}" if query else f"?done={done}"
        return RedirectResponse("/passkeys" + joined, status_code=303)

    async def listing(self, request: Request) -> Response:
        session = await self._pages.session(request)
        if session is None:
            return RedirectResponse("/login", status_code=303)
        uses = self._passkeys()
        held = await run_in_threadpool(uses.passkeys)
        w, p = self._pages.wording(request), words(request)
        offered = uses.offered_at(own_origin(request))
        lately = await self._pages.lately(session)
        notices = {
            "added": p.added,
            "removed": p.removed,
            "not-found": p.not_found,
            **{r.value: _notice(p, r) for r in PasskeyRefused},
        }
        return self._pages.page(
            request,
            "passkeys.html",
            heading=w.passkeys,
            csrf=session.csrf_secret,
            signed_in=True,
            p=p,
            notice=notices.get(request.query_params.get("done", "")),
            rows=[(k, unseen.marked(k.label)) for k in held],
            offered=offered,
            lately=lately,
            full=p.full.format(most=MOST_PASSKEYS) if uses.full(held) else None,
            again_link=AGAIN_LINKS[_language(request)],
            again_href=again_href(self._pages.lang_query(request), Again.ADD_PASSKEY),
            elsewhere=None if offered else p.elsewhere.format(origin=uses.origins[0]),
        )

    async def remove(self, request: Request) -> Response:
        if not from_own_origin(request):
            return forbidden(request)
        form = await self._pages.bounded_form(request, MAX_CEREMONY_OCTETS)
        session = await self._pages.session(request)
        if form is None or session is None or not csrf_holds(session, form.get("csrf")):
            return forbidden(request)
        credential_id = str(request.path_params["credential_id"])
        token = self._pages.token(request)
        assert token is not None
        removed = await run_in_threadpool(self._passkeys().remove, credential_id, token)
        if removed is PasskeyRefused.SIGN_IN_AGAIN:
            return _sign_in_again(self._pages, request, Again.REMOVE_PASSKEY)
        if isinstance(removed, PasskeyRefused):
            return forbidden(request)
        return self._back(request, "removed" if removed else "not-found")


def _sign_in_again(pages: PageMaker, request: Request, why: Again) -> Response:
    return RedirectResponse(again_href(pages.lang_query(request), why), status_code=303)


def _notice(p: PasskeyWording, refused: PasskeyRefused) -> str:
    return {
        PasskeyRefused.FORM_EXPIRED: p.expired,
        PasskeyRefused.NOT_OFFERED: p.not_offered,
        PasskeyRefused.NO_CHALLENGE: p.expired,
        PasskeyRefused.NOT_ACCEPTED: p.not_accepted,
        PasskeyRefused.SIGN_IN_AGAIN: p.expired,
        PasskeyRefused.TOO_MANY: p.too_many.format(most=MOST_PASSKEYS),
    }[refused]
