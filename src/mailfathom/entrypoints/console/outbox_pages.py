"""The console's outbox and mailbox-changes pages: what agents queued to send and asked to
change, and the owner's two decisions about them, each a plain form POST.

A withdrawal or retry answers with a redirect back to its page naming the outcome (`?done=`),
so a reload never repeats the decision. Nothing of a request or a record is logged here; the
use cases log what they log already."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from mailfathom.app.console.mutations import ChangeEntry, ConsoleMutations
from mailfathom.app.console.outbox import ConsoleOutbox, SendState
from mailfathom.app.console.ports import ConsoleSession
from mailfathom.app.flags.administer_mutations import Retried
from mailfathom.app.sending.administer_outbox import Withdrawn
from mailfathom.domain import unseen
from mailfathom.domain.mutations import FolderCreationRecord, MutationKind, MutationState
from mailfathom.entrypoints.console.form_checks import posted_form
from mailfathom.entrypoints.console.outbox_wording import WORDINGS, OutboxWording
from mailfathom.entrypoints.console.record_wording import WORDINGS as RECORD_WORDINGS
from mailfathom.entrypoints.console.record_wording import RecordWording
from mailfathom.entrypoints.console.wording import ConsoleWording, chosen_language

MAX_FORM_OCTETS = 1024


class PageMaker(Protocol):
    """What these pages take from the console's page set: its layout and its session."""

    def page(
        self, request: Request, name: str, status: int = 200, **values: object
    ) -> Response: ...

    def wording(self, request: Request) -> ConsoleWording: ...

    def lang_query(self, request: Request) -> str: ...

    async def session(self, request: Request) -> ConsoleSession | None: ...


def _words(request: Request) -> tuple[OutboxWording, RecordWording]:
    language = chosen_language(
        request.query_params.get("lang"), request.headers.get("accept-language")
    )
    return WORDINGS[language], RECORD_WORDINGS[language]


def _back(pages: PageMaker, request: Request, path: str, done: str) -> Response:
    query = pages.lang_query(request)
    joined = f"{query}&done={done}" if query else f"?done={done}"
    return RedirectResponse(path + joined, status_code=303)


async def _decided(pages: PageMaker, request: Request) -> ConsoleSession | Response:
    """The signed-in session of a POST from the console's own origin with its CSRF token;
    otherwise the answer to give (`form_checks`), before anything is done."""
    posted = await posted_form(pages, request, max_fields=4, max_part_size=MAX_FORM_OCTETS)
    return posted if isinstance(posted, Response) else posted[0]


class OutboxPages:
    def __init__(
        self,
        pages: PageMaker,
        outbox: Callable[[], ConsoleOutbox],
        mutations: Callable[[], ConsoleMutations],
    ) -> None:
        self._pages = pages
        self._outbox = outbox
        self._mutations = mutations

    def routes(self) -> list[Route]:
        return [
            Route("/outbox", self.outbox, methods=["GET"]),
            Route("/outbox/{outgoing_id}/cancel", self.cancel, methods=["POST"]),
            Route("/mutations", self.mutations, methods=["GET"]),
            Route("/mutations/{record_id}/retry", self.retry, methods=["POST"]),
        ]

    async def outbox(self, request: Request) -> Response:
        session = await self._pages.session(request)
        if session is None:
            return RedirectResponse("/login", status_code=303)
        entries = await run_in_threadpool(self._outbox().entries)
        w, (d, k) = self._pages.wording(request), _words(request)
        states = {
            SendState.QUEUED: w.queued,
            SendState.HELD: w.held,
            SendState.SENDING: w.sending,
            SendState.SENT: w.sent,
            SendState.REFUSED: w.refused,
            SendState.UNKNOWN: d.outcome_unknown,
            SendState.CANCELLED: w.cancelled,
        }
        notices = {
            Withdrawn.NOW.value: d.cancelled_now,
            Withdrawn.ALREADY_ENDED.value: d.already_ended,
            Withdrawn.IN_TRANSMISSION.value: d.in_transmission,
            "not-found": d.not_found,
        }
        return self._pages.page(
            request,
            "outbox.html",
            heading=w.outbox,
            live_page="/outbox",
            csrf=session.csrf_secret,
            signed_in=True,
            d=d,
            notice=notices.get(request.query_params.get("done", "")),
            rows=[(e, states[e.state]) for e in entries],
            k=k,
            explain=k.send_failure,
        )

    async def cancel(self, request: Request) -> Response:
        decided = await _decided(self._pages, request)
        if isinstance(decided, Response):
            return decided
        outgoing_id = str(request.path_params["outgoing_id"])
        withdrawal = await run_in_threadpool(self._outbox().withdraw, outgoing_id)
        done = "not-found" if withdrawal is None else withdrawal.outcome.value
        return _back(self._pages, request, "/outbox", done)

    async def mutations(self, request: Request) -> Response:
        session = await self._pages.session(request)
        if session is None:
            return RedirectResponse("/login", status_code=303)
        entries = await run_in_threadpool(self._mutations().entries)
        w, (d, k) = self._pages.wording(request), _words(request)
        states = {
            MutationState.PENDING: w.mutations_pending,
            MutationState.CONVERGING: d.converging,
            MutationState.DEAD_LETTERED: w.mutations_dead_lettered,
        }
        notices = {
            Retried.NOW.value: d.retried_now,
            Retried.NOT_DEAD_LETTERED.value: d.not_dead_lettered,
            Retried.ALIAS_CLAIMED.value: d.alias_claimed,
            "not-found": d.no_change,
        }
        return self._pages.page(
            request,
            "mutations.html",
            heading=w.mutations,
            live_page="/mutations",
            csrf=session.csrf_secret,
            signed_in=True,
            d=d,
            notice=notices.get(request.query_params.get("done", "")),
            rows=[_change_row(e, states[e.record.state], d, k) for e in entries],
        )

    async def retry(self, request: Request) -> Response:
        decided = await _decided(self._pages, request)
        if isinstance(decided, Response):
            return decided
        record_id = str(request.path_params["record_id"])
        outcome = await run_in_threadpool(self._mutations().retry, record_id)
        done = "not-found" if outcome is None else outcome.outcome.value
        return _back(self._pages, request, "/mutations", done)


@dataclass(frozen=True, slots=True)
class _ChangeRow:
    """One change as the page shows it, in the page's language."""

    entry: ChangeEntry
    state: str
    kind: str
    value: str
    # The sentence for the record's failure code; None while it has none.
    reason: str | None


def _change_row(entry: ChangeEntry, state: str, d: OutboxWording, k: RecordWording) -> _ChangeRow:
    record = entry.record
    code = record.last_error_code
    if isinstance(record, FolderCreationRecord):
        kind, explain = k.folder_creation, k.creation_failure
    else:
        kind, explain = k.change_kinds[record.kind], k.change_failure
    reason = None if code is None else explain(code)
    return _ChangeRow(entry, state, kind, _value(entry, d), reason)


def _value(entry: ChangeEntry, d: OutboxWording) -> str:
    """What the change asks for, as `mfctl mutations` shows it: a flag's value, how many
    keywords (never which), where a move goes, or the folder a new one is created under."""
    record = entry.record
    if isinstance(record, FolderCreationRecord):
        if record.parent_folder_id is None:
            return d.top_level
        return d.under.format(folder=_shown(entry.parent, d))
    if entry.keywords is not None:
        return d.keywords.format(n=entry.keywords)
    if record.kind is MutationKind.MOVE:
        return d.move_to.format(folder=_shown(entry.destination, d))
    return d.on if record.value == "true" else d.off


def _shown(alias: str | None, d: OutboxWording) -> str:
    """A folder's alias with every character that displays as nothing written out."""
    return d.folder_gone if alias is None else unseen.marked(alias)
