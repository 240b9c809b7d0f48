"""The console's contact pages: the book a page at a time, each person with their origin,
and the owner's Promote (one form POST) and Erase (a page saying what goes, then a form POST
with a box ticked to confirm; no script needed).

A decision answers with a redirect back to the book naming the outcome (`?done=`), so a
reload never repeats it. Names and addresses are shown as text, with every character that
renders as nothing written out. Nothing of a contact is logged here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from mailfathom.app.console.contact_book import BookEntry, ConsoleContacts, Promoted
from mailfathom.domain import unseen
from mailfathom.domain.contacts import ContactOrigin
from mailfathom.domain.errors import Refusal
from mailfathom.entrypoints.console.contact_wording import CONTACT_WORDINGS, ContactWording
from mailfathom.entrypoints.console.outbox_pages import PageMaker, _back, _decided
from mailfathom.entrypoints.console.wording import chosen_language

ERASED = "erased"


@dataclass(frozen=True, slots=True)
class ShownContact:
    contact_id: str
    name: str
    addresses: tuple[str, ...]
    kind: str
    kind_value: str
    origins: tuple[str, ...]
    recorded: str
    recorded_iso: str
    promotable: bool


def _words(request: Request) -> ContactWording:
    language = chosen_language(
        request.query_params.get("lang"), request.headers.get("accept-language")
    )
    return CONTACT_WORDINGS[language]


def shown_contact(entry: BookEntry, c: ContactWording) -> ShownContact:
    contact = entry.contact
    origins = [c.writers[w] for w in entry.writers]
    if contact.peer_account_id is not None:
        origins = [c.peer_of.format(account=contact.peer_account_id)]
    asserted = contact.origin is ContactOrigin.ASSERTED
    return ShownContact(
        contact_id=str(contact.contact_id),
        name=unseen.marked(contact.display_name) if contact.display_name else c.unnamed,
        addresses=tuple(unseen.marked(a) for a in contact.addresses),
        kind=c.asserted if asserted else c.collected,
        kind_value=contact.origin.value,
        origins=tuple(origins),
        recorded=contact.recorded_at.isoformat(timespec="seconds"),
        recorded_iso=contact.recorded_at.isoformat(),
        promotable=entry.promotable,
    )


def _with_lang(pages: PageMaker, request: Request, path: str) -> str:
    return path + pages.lang_query(request)


class ContactPages:
    def __init__(self, pages: PageMaker, contacts: Callable[[], ConsoleContacts]) -> None:
        self._pages = pages
        self._contacts = contacts

    def routes(self) -> list[Route]:
        return [
            Route("/contacts", self.book, methods=["GET"]),
            Route("/contacts/{contact_id}/promote", self.promote, methods=["POST"]),
            Route("/contacts/{contact_id}/erase", self.erase_form, methods=["GET"]),
            Route("/contacts/{contact_id}/erase", self.erase, methods=["POST"]),
        ]

    async def book(self, request: Request) -> Response:
        session = await self._pages.session(request)
        if session is None:
            return RedirectResponse("/login", status_code=303)
        w, c = self._pages.wording(request), _words(request)
        cursor = request.query_params.get("cursor") or None
        book = self._contacts()
        notices = {
            Promoted.NOW.value: c.promoted,
            Promoted.ALREADY.value: c.already_asserted,
            Promoted.UNNAMED.value: c.unnamed_refused,
            Promoted.NOT_FOUND.value: c.not_found,
        }
        done = request.query_params.get("done", "")
        notice = notices.get(done)
        if done == ERASED:
            notice = c.erased.format(addresses=_count(request.query_params.get("addresses")))
        try:
            page = await run_in_threadpool(book.page, cursor)
        except Refusal:
            page, cursor, notice = await run_in_threadpool(book.page, None), None, c.cursor_refused
        return self._pages.page(
            request,
            "contacts.html",
            heading=w.contacts,
            csrf=session.csrf_secret,
            signed_in=True,
            c=c,
            notice=notice,
            rows=[shown_contact(e, c) for e in page.entries],
            next_cursor=page.next_cursor,
            paged=cursor is not None,
        )

    async def promote(self, request: Request) -> Response:
        decided = await _decided(self._pages, request)
        if isinstance(decided, Response):
            return decided
        contact_id = str(request.path_params["contact_id"])
        outcome = await run_in_threadpool(self._contacts().promote, contact_id)
        return _back(self._pages, request, "/contacts", outcome.value)

    async def erase_form(self, request: Request, unconfirmed: bool = False) -> Response:
        session = await self._pages.session(request)
        if session is None:
            return RedirectResponse("/login", status_code=303)
        c = _words(request)
        contact_id = str(request.path_params["contact_id"])
        entry = await run_in_threadpool(self._contacts().find, contact_id)
        if entry is None:
            return _back(self._pages, request, "/contacts", Promoted.NOT_FOUND.value)
        return self._pages.page(
            request,
            "contact_erase.html",
            status=400 if unconfirmed else 200,
            heading=c.erase_heading,
            csrf=session.csrf_secret,
            signed_in=True,
            c=c,
            notice=c.unconfirmed if unconfirmed else None,
            contact=shown_contact(entry, c),
            removes=c.erase_removes.format(n=len(entry.contact.addresses)),
            back=_with_lang(self._pages, request, "/contacts"),
        )

    async def erase(self, request: Request) -> Response:
        decided = await _decided(self._pages, request)
        if isinstance(decided, Response):
            return decided
        form = await request.form()
        if form.get("confirm") != "yes":
            return await self.erase_form(request, unconfirmed=True)
        contact_id = str(request.path_params["contact_id"])
        erased = await run_in_threadpool(self._contacts().erase, contact_id)
        if erased is None or not erased.was_held:
            return _back(self._pages, request, "/contacts", Promoted.NOT_FOUND.value)
        done = f"{ERASED}&addresses={erased.addresses_erased}"
        return _back(self._pages, request, "/contacts", done)


def _count(text: str | None) -> int:
    return int(text) if text is not None and text.isdigit() and len(text) < 4 else 0
