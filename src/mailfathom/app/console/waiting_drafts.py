"""The drafts waiting for the owner (owner alerts), and the owner's Send, Edit and Delete.

Each is the drafting use case an agent's call runs, called as the owner: Send is send_draft
through the confirmation step, the console's page standing for the question and the owner's
click for the answer, so every sending bound (sending on, recipient policy and vouching, the
counts and sizes, the ceilings) is asked exactly as for a person's Send to a client's
question, and the answer is bound to the message shown: a draft changed after the page
showed it (an agent's update_draft, an edit in another tab) is refused (59004) and nothing
is sent. Edit and Delete name the revision shown and the store applies them only to it, so an
agent's update_draft landing between the check and the write is never overwritten nor given
up unseen. Edit is update_draft, Delete is delete_draft. A draft sent or deleted, from here or
by an agent's call, has its alert dismissed in the same store transaction: there is nothing
left to decide.

The binding is `ConfirmedSending.binding` of the draft as `DraftPromotion.shown` shows it, in
one language whatever the page's (the wording is no part of the message)."""

from __future__ import annotations

from dataclasses import dataclass

from mailfathom.app.confirmation.confirmed_sending import ConfirmedSending, Settled, alert_key
from mailfathom.app.confirmation.ports import (
    Answer,
    AnswerKind,
    Choice,
    OwnerAlert,
    OwnerAlerts,
    Question,
)
from mailfathom.app.confirmation.question import ShownMessage
from mailfathom.app.confirmation.wording import Language
from mailfathom.app.drafting.composition import (
    DraftRequest,
    DraftRevised,
    draft_identifier,
    not_held,
)
from mailfathom.app.drafting.delete_draft import DraftDeleted, DraftDeletion
from mailfathom.app.drafting.ports import DraftStore
from mailfathom.app.drafting.results import DraftStanding
from mailfathom.app.drafting.send_draft import DraftPromotion
from mailfathom.app.drafting.update_draft import DraftEditing
from mailfathom.domain.access import ALL_PERMISSIONS, Caller, ConfirmationMode
from mailfathom.domain.codes import Code
from mailfathom.domain.drafts import Draft, DraftLife
from mailfathom.domain.errors import Refusal
from mailfathom.domain.outgoing import AddressField, OutgoingRecord

OWNER = Caller(ALL_PERMISSIONS, "console:owner", ConfirmationMode.ASK)
"""The owner deciding in the console: every grant, and asked (the page is the question). The
label counts the owner's sends under the ceilings; no admission entry can be named so."""

BINDING_LANGUAGE = Language.EN


@dataclass(frozen=True, slots=True)
class WaitingDraft:
    """A draft the owner is asked about: its alert, the draft as stored, the message as it
    will be sent, and the binding a Send of it carries."""

    alert: OwnerAlert
    draft: Draft
    shown: ShownMessage
    binding: str


@dataclass(frozen=True, slots=True)
class Edit:
    """The owner's edit: the whole message, as update_draft states it (plain text)."""

    to: tuple[str, ...]
    cc: tuple[str, ...]
    bcc: tuple[str, ...]
    subject: str
    body: str


class DraftChanged(Exception):
    """The draft is no longer the one the owner was shown: nothing was done."""


class _OwnerSaidSend:
    """The owner's click on Send, as the confirmation step's answer."""

    def __init__(self, binding: str) -> None:
        self._binding = binding

    def ask(self, question: Question) -> Answer:
        return Answer(AnswerKind.CHOSEN, self._binding, Choice.SEND)


class WaitingDrafts:
    def __init__(
        self,
        alerts: OwnerAlerts,
        drafts: DraftStore,
        promotion: DraftPromotion,
        editing: DraftEditing,
        deletion: DraftDeletion,
        confirmed: ConfirmedSending,
    ) -> None:
        self._alerts = alerts
        self._drafts = drafts
        self._promotion = promotion
        self._editing = editing
        self._deletion = deletion
        self._confirmed = confirmed

    def listing(self) -> list[WaitingDraft]:
        """Every draft waiting, the newest alert first: each is a decision only the owner
        makes, so none is left off the page however many wait."""
        waiting = []
        for alert in self._alerts.waiting():
            found = self._shown(alert)
            if found is not None:
                waiting.append(found)
        return waiting

    def waiting(self, draft_id: object) -> WaitingDraft | None:
        """The draft as the owner is shown it now, or None when no alert waits on a live
        draft of that identifier (looked up by its key, whatever else waits)."""
        try:
            identifier = draft_identifier(draft_id)
        except Refusal:
            return None
        alert = self._alerts.find_waiting(alert_key(str(identifier)))
        return None if alert is None else self._shown(alert)

    def _shown(self, alert: OwnerAlert) -> WaitingDraft | None:
        try:
            identifier = draft_identifier(alert.draft_id)
        except Refusal:
            return None
        draft = self._drafts.find(identifier)
        if draft is None or draft.life is not DraftLife.LIVE:
            return None
        shown = self._promotion.shown(draft)
        return WaitingDraft(alert, draft, shown, self._confirmed.binding(shown, BINDING_LANGUAGE))

    def send(self, draft_id: object, binding: str) -> OutgoingRecord:
        """Queue the draft exactly as shown under `binding`. Raises `DraftChanged` when it
        changed since, or the refusal a sending bound gives (nothing queued either way)."""
        shown = self._held(draft_id)
        try:
            settled: Settled[OutgoingRecord] = self._promotion.settle(
                OWNER, str(shown.draft.draft_id), _OwnerSaidSend(binding), BINDING_LANGUAGE.value
            )
        except Refusal as refusal:
            if refusal.code == Code.CONFIRMATION_OUTDATED:
                raise DraftChanged from None
            raise
        if settled.record is None:
            raise not_held()
        return settled.record

    def edit(self, draft_id: object, binding: str, edit: Edit) -> DraftStanding:
        """Save the owner's edit as the draft's next revision (update_draft); the draft's
        answer (reply or forward) is kept. Raises `DraftChanged` when the draft is no
        longer the one the edit started from."""
        shown = self._held(draft_id)
        if shown.binding != binding:
            raise DraftChanged
        draft = shown.draft
        if draft.files:
            raise Refusal(
                Code.MESSAGE_FIELD_NOT_COMPOSABLE,
                "The draft carries files, which an edit here would drop; edit it with "
                "update_draft, naming its files.",
            )
        request = DraftRequest(
            plain_text_body=edit.body,
            account=draft.account_id,
            subject=edit.subject,
            to=edit.to,
            cc=edit.cc,
            bcc=edit.bcc,
            answered_email_id=None
            if draft.answered_email_id is None
            else str(draft.answered_email_id),
            answering=None if draft.answering is None else draft.answering.value,
        )
        try:
            return self._editing.update(OWNER, str(draft.draft_id), request, draft.revision)
        except DraftRevised:
            raise DraftChanged from None

    def delete(self, draft_id: object, binding: str) -> DraftDeleted:
        """Give the draft up (delete_draft; its alert is dismissed with it)."""
        shown = self._held(draft_id)
        if shown.binding != binding:
            raise DraftChanged
        try:
            return self._deletion.delete(OWNER, str(shown.draft.draft_id), shown.draft.revision)
        except DraftRevised:
            raise DraftChanged from None

    def _held(self, draft_id: object) -> WaitingDraft:
        found = self.waiting(draft_id)
        if found is None:
            raise not_held()
        return found


def recipients_of(draft: Draft, field: AddressField) -> tuple[str, ...]:
    """The draft's addresses in `field` (the edit form starts from them)."""
    return tuple(r.address for r in draft.recipients if r.field is field)
