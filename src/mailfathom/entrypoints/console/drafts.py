"""The console's "Waiting for you" page: the drafts kept for the owner, each shown exactly as
it will be sent (plain text, every character that renders as nothing written out), with
Send, Edit and Delete as plain form POSTs.

Every form carries the binding of the message it was shown next to; the use case refuses a
Send, an edit or a deletion whose binding is not the draft's as it stands now, and the page
then shows the new version. Nothing of a message is logged."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from mailfathom.app.confirmation.confirmed_sending import SENSITIVE_REASON
from mailfathom.app.confirmation.wording import Language
from mailfathom.app.console.waiting_drafts import DraftChanged, Edit, WaitingDraft, WaitingDrafts
from mailfathom.domain import unseen
from mailfathom.domain.codes import Code
from mailfathom.domain.errors import Refusal
from mailfathom.domain.outgoing import AddressField
from mailfathom.entrypoints.console.drafts_wording import DRAFTS_WORDINGS, DraftsWording
from mailfathom.entrypoints.console.form_checks import posted_form

if TYPE_CHECKING:
    from mailfathom.entrypoints.console.pages import _Pages

EDIT_PATH = re.compile(r"/drafts/[^/]+/edit")


@dataclass(frozen=True, slots=True)
class Row:
    label: str
    value: str


@dataclass(frozen=True, slots=True)
class ShownDraft:
    """A waiting draft as the page writes it: every value already marked."""

    draft_id: str
    binding: str
    title: str
    kept_because: str
    rows: tuple[Row, ...]
    body: str
    html: str | None
    has_unseen: bool
    editable: bool


def shown_draft(waiting: WaitingDraft, w: DraftsWording, account: str) -> ShownDraft:
    shown = waiting.shown
    raw: list[str] = [shown.sender, *shown.to, *shown.cc, *shown.bcc, shown.subject, shown.body]
    raw.extend(f.name for f in shown.files)
    if shown.html is not None:
        raw.append(shown.html)
    rows = [Row(w.sender, unseen.marked(shown.sender))]
    for label, values in ((w.to, shown.to), (w.cc, shown.cc), (w.bcc, shown.bcc)):
        if values:
            rows.append(Row(label, ", ".join(unseen.marked(v) for v in values)))
    rows.append(Row(w.subject, unseen.marked(shown.subject)))
    if shown.files:
        files = ", ".join(f"{unseen.marked(f.name)} ({f.octets} {w.octets})" for f in shown.files)
        rows.append(Row(w.attachments, files))
    reason = (
        w.reason_sensitive if waiting.alert.reason == SENSITIVE_REASON else w.reason_unavailable
    )
    return ShownDraft(
        draft_id=str(waiting.draft.draft_id),
        binding=waiting.binding,
        title=unseen.marked(shown.subject),
        kept_because=f"{w.kept_because.format(account=account)} {reason}",
        rows=tuple(rows),
        body=unseen.marked(shown.body),
        html=None if shown.html is None else unseen.marked(shown.html),
        has_unseen=any(unseen.marked(value) != value for value in raw),
        editable=not waiting.draft.files,
    )


def _addresses(value: object) -> tuple[str, ...]:
    text = value if isinstance(value, str) else ""
    return tuple(part.strip() for part in text.split(",") if part.strip())


def _text(form: FormData, name: str) -> str:
    value = form.get(name)
    return value.replace("\r\n", "\n") if isinstance(value, str) else ""


class DraftPages:
    def __init__(
        self,
        pages: _Pages,
        drafts: Callable[[], WaitingDrafts],
        account_names: Callable[[], dict[str, str]],
        edit_octets: int,
    ) -> None:
        self._pages = pages
        self._drafts = drafts
        self._names = account_names
        self._edit_octets = edit_octets

    def routes(self) -> list[Route]:
        return [
            Route("/drafts", self.listing, methods=["GET"]),
            Route("/drafts/{draft_id}/send", self.send, methods=["POST"]),
            Route("/drafts/{draft_id}/edit", self.edit_form, methods=["GET"]),
            Route("/drafts/{draft_id}/edit", self.edit, methods=["POST"]),
            Route("/drafts/{draft_id}/delete", self.delete, methods=["POST"]),
        ]

    def _w(self, request: Request) -> DraftsWording:
        language = Language(self._pages._wording(request)[0])
        return DRAFTS_WORDINGS[language]

    def _shown(self, request: Request, waiting: WaitingDraft) -> ShownDraft:
        account = waiting.draft.account_id
        return shown_draft(waiting, self._w(request), self._names().get(account, account))

    async def listing(self, request: Request, notice: str | None = None) -> Response:
        session = await self._pages.signed_in(request)
        if session is None:
            return RedirectResponse("/login", status_code=303)
        waiting = await run_in_threadpool(self._drafts().listing)
        _, wording, _ = self._pages._wording(request)
        return self._pages._page(
            request,
            "drafts.html",
            heading=wording.decisions,
            live_page="/drafts",
            csrf=session.csrf_secret,
            signed_in=True,
            d=self._w(request),
            drafts=[self._shown(request, one) for one in waiting],
            notice=notice,
        )

    async def _posted(self, request: Request, max_octets: int = 8192) -> FormData | Response:
        """The form of a signed-in POST from the console's own origin with its CSRF token;
        otherwise the answer to give (`refusals`), before anything is done."""
        posted = await posted_form(self._pages, request, max_fields=10, max_part_size=max_octets)
        return posted if isinstance(posted, Response) else posted[1]

    async def send(self, request: Request) -> Response:
        form = await self._posted(request)
        if isinstance(form, Response):
            return form
        draft_id = request.path_params["draft_id"]
        drafts = self._drafts()
        return await self._decided(
            request, lambda: drafts.send(draft_id, _text(form, "binding")), "sent"
        )

    async def delete(self, request: Request) -> Response:
        form = await self._posted(request)
        if isinstance(form, Response):
            return form
        draft_id = request.path_params["draft_id"]
        drafts = self._drafts()
        return await self._decided(
            request, lambda: drafts.delete(draft_id, _text(form, "binding")), "deleted"
        )

    async def edit(self, request: Request) -> Response:
        form = await self._posted(request, self._edit_octets)
        if isinstance(form, Response):
            return form
        draft_id = request.path_params["draft_id"]
        edit = Edit(
            to=_addresses(form.get("to")),
            cc=_addresses(form.get("cc")),
            bcc=_addresses(form.get("bcc")),
            subject=_text(form, "subject"),
            body=_text(form, "body"),
        )
        drafts = self._drafts()
        return await self._decided(
            request, lambda: drafts.edit(draft_id, _text(form, "binding"), edit), "saved"
        )

    async def _decided(self, request: Request, act: Callable[[], object], done: str) -> Response:
        w = self._w(request)
        try:
            await run_in_threadpool(act)
        except DraftChanged:
            return await self.listing(request, w.changed_notice)
        except Refusal as refusal:
            if refusal.code == Code.DRAFT_NOT_HELD:
                return await self.listing(request, w.gone_notice)
            notice = w.refused_notice.format(code=int(refusal.code), reason=refusal.message)
            return await self.listing(request, notice)
        notices = {"sent": w.sent_notice, "deleted": w.deleted_notice, "saved": w.saved_notice}
        return await self.listing(request, notices[done])

    async def edit_form(self, request: Request) -> Response:
        session = await self._pages.signed_in(request)
        if session is None:
            return RedirectResponse("/login", status_code=303)
        draft_id = request.path_params["draft_id"]
        waiting = await run_in_threadpool(self._drafts().waiting, draft_id)
        w = self._w(request)
        if waiting is None:
            return await self.listing(request, w.gone_notice)
        draft = waiting.draft
        shown = waiting.shown
        return self._pages._page(
            request,
            "draft_edit.html",
            heading=w.edit_heading,
            csrf=session.csrf_secret,
            signed_in=True,
            d=w,
            draft=self._shown(request, waiting),
            to=", ".join(r.address for r in draft.recipients if r.field is AddressField.TO),
            cc=", ".join(r.address for r in draft.recipients if r.field is AddressField.CC),
            bcc=", ".join(r.address for r in draft.recipients if r.field is AddressField.BCC),
            subject=shown.subject,
            body=shown.body,
        )
