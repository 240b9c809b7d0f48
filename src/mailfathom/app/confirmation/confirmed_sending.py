"""The one step every tool that sends passes before a message is written down for sending.

For a caller whose entry says `Confirmation = "ask"` the message is composed and every bound
checked first; then one question goes to a person, and only an answer of Send to exactly what
was shown writes the send. Save draft keeps a draft; Cancel writes nothing. Any other answer,
or none, writes nothing and is refused. A client that cannot put a question to a person gets
a draft and an alert to the owner instead, never a send.

After the answer everything is prepared again — the caller's grant, the account's sending,
the bounds, the message itself — and the answer counts only when the message is still the one
shown. Nothing the caller sends is consulted on whether to ask.

A call repeated with the same identity (a sending tool's idempotency key, a draft) is not a
new message: it answers from what the first call left — the send, as it stands, or the draft —
and nobody is asked about it again, so no answer given to a repeat can contradict mail that
is leaving.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Generic, TypeVar

import structlog

from mailfathom.app.confirmation.ports import (
    Answer,
    AnswerKind,
    Choice,
    Confirmation,
    KeptDraft,
    KeptLife,
    OwnerAlert,
    OwnerAlerts,
    Question,
)
from mailfathom.app.confirmation.question import ShownFile, ShownMessage, question
from mailfathom.app.confirmation.wording import Language
from mailfathom.app.shared.content_screen import UNSCREENED, ContentScreen
from mailfathom.domain.access import Caller, ConfirmationMode
from mailfathom.domain.codes import Code
from mailfathom.domain.errors import Refusal
from mailfathom.domain.sensitive_content import OutgoingScreening, SensitiveCategory

log = structlog.get_logger("mailfathom.confirmation")

M = TypeVar("M")
R = TypeVar("R")

UNAVAILABLE_REASON = "confirmation_unavailable"
SENSITIVE_REASON = "sensitive_content"


class Status(enum.Enum):
    QUEUED = "queued"
    DRAFT = "draft"
    CANCELLED = "cancelled"


@dataclass(frozen=True, slots=True)
class Prepared(Generic[M]):
    """A message ready to be written down (`message`, the use case's own shape) and what a
    person would be shown of it."""

    shown: ShownMessage
    message: M


@dataclass(frozen=True, slots=True)
class Settled(Generic[R]):
    """How a sending call ended: queued with its `record`, kept as draft `draft_id`
    (`reason` says why when nobody chose it), or cancelled by the person asked."""

    status: Status
    account_id: str
    record: R | None = None
    draft_id: str | None = None
    reason: str | None = None


def alert_key(draft_id: str) -> str:
    return "draft:" + hashlib.sha256(draft_id.encode("utf-8", "surrogatepass")).hexdigest()


def _now() -> datetime:
    return datetime.now(UTC)


class NobodyToAsk:
    """The confirmation of a call that came with no client to ask through."""

    def ask(self, question: object) -> Answer:
        return Answer(AnswerKind.UNAVAILABLE)


def _unheard(alert: OwnerAlert) -> None:
    """Nobody listens."""


class ConfirmedSending:
    def __init__(
        self,
        alerts: OwnerAlerts,
        clock: Callable[[], datetime] = _now,
        raised: Callable[[OwnerAlert], None] = _unheard,
        screen: ContentScreen = UNSCREENED,
    ) -> None:
        """`raised` is told of each owner alert this step records (not of one already held),
        after it was recorded. `screen` finds sensitive content in a message leaving."""
        self._screen = screen
        self._alerts = alerts
        self._clock = clock
        self._raised = raised

    def settle(
        self,
        caller: Caller,
        confirmation: Confirmation,
        language: Language,
        prepare: Callable[[], Prepared[M]],
        send: Callable[[M], R],
        save_draft: Callable[[M], str],
        repeated: Callable[[M], Settled[R] | None] = lambda _: None,
    ) -> Settled[R]:
        """Prepare the message, ask when the caller's entry says so, and do what the answer
        says. `prepare` checks everything and writes nothing; it is run again after an
        answer. `send` writes the send down; `save_draft` keeps a draft. `repeated` answers
        how a call with the same identity already ended (the send it queued, as it stands
        now, or the draft it was kept as), or None: then nobody is asked. It is asked again
        once an answer came, so a call whose message another call sent while the person
        decided answers that send whatever the person chose, and is never told it was
        cancelled or kept as a draft."""
        prepared = prepare()
        account_id = prepared.shown.account_id
        if caller.confirmation is ConfirmationMode.NONE:
            held = self.unasked(prepared, save_draft, repeated)
            if held is not None:
                return held
            return Settled(Status.QUEUED, account_id, record=send(prepared.message))
        earlier = repeated(prepared.message)
        if earlier is not None:
            log.info("confirmation.repeat_answered", caller=caller.label)
            return earlier
        answer = confirmation.ask(self._question(prepared.shown, language))
        log.info("confirmation.answered", caller=caller.label, answer=_logged(answer))
        meanwhile = repeated(prepared.message)
        if meanwhile is not None:
            log.info("confirmation.settled_meanwhile", caller=caller.label)
            return meanwhile
        if answer.kind is AnswerKind.UNAVAILABLE:
            return self._unattended(prepared, save_draft)
        if answer.kind is AnswerKind.DECLINED:
            raise Refusal(
                Code.CONFIRMATION_DECLINED,
                "The person who was asked declined or dismissed the question; nothing was "
                "sent or saved.",
            )
        if answer.kind is AnswerKind.EXPIRED:
            raise Refusal(
                Code.CONFIRMATION_EXPIRED,
                "No answer came within McpEndpoint.ConfirmationTimeoutSeconds; nothing was "
                "sent or saved.",
            )
        if answer.kind is not AnswerKind.CHOSEN or answer.choice is None:
            raise Refusal(
                Code.CONFIRMATION_NOT_UNDERSTOOD,
                "The answer was none of Send, Save draft or Cancel; nothing was sent or saved.",
            )
        if answer.choice is Choice.CANCEL:
            return Settled(Status.CANCELLED, account_id)
        current = prepare()
        if self._question(current.shown, language).binding != answer.binding:
            raise Refusal(
                Code.CONFIRMATION_OUTDATED,
                "What would be sent is no longer what the person was shown; nothing was sent "
                "or saved. Ask again to show the message as it is now.",
            )
        if answer.choice is Choice.SAVE_DRAFT:
            return Settled(Status.DRAFT, account_id, draft_id=save_draft(current.message))
        return Settled(Status.QUEUED, account_id, record=send(current.message))

    def sensitive(self, shown: ShownMessage) -> frozenset[SensitiveCategory]:
        """The categories of sensitive content the message carries out: in its subject,
        its bodies, or its file names. Empty when outgoing mail is not screened."""
        texts = [shown.subject, shown.body, shown.html, *(f.name for f in shown.files)]
        return self._screen.categories_leaving(texts)

    def refuse_sensitive(self, shown: ShownMessage) -> None:
        """Refuse (53013) a message carrying sensitive content on a path that can answer
        only with a send: one that asks nobody and can keep no draft."""
        found = self.sensitive(shown)
        if found:
            raise _sensitive_refusal(found)

    def unasked(
        self,
        prepared: Prepared[M],
        save_draft: Callable[[M], str],
        repeated: Callable[[M], Settled[R] | None],
    ) -> Settled[R] | None:
        """A message of a caller whose entry asks nobody: None when it may go as it stands.
        Carrying sensitive content it is refused (53013), or under `Outgoing = "keepDraft"`
        kept as a draft with an owner alert, as a message nobody could be asked about is
        (a repeat answers the draft the first call kept)."""
        found = self.sensitive(prepared.shown)
        if not found:
            return None
        if self._screen.outgoing is not OutgoingScreening.KEEP_DRAFT:
            raise _sensitive_refusal(found)
        earlier = repeated(prepared.message)
        if earlier is not None:
            return earlier
        return self._unattended(prepared, save_draft, SENSITIVE_REASON)

    def binding(self, shown: ShownMessage, language: Language) -> str:
        """What an answer of Send to `shown`, asked in `language`, must carry to count
        (`Answer.binding`): a person deciding somewhere other than a client's question (the
        owner's console) binds their Send to it."""
        return self._question(shown, language).binding

    def _question(self, shown: ShownMessage, language: Language) -> Question:
        """The question about `shown`, naming the sensitive content it carries and showing
        it redacted; its binding is of the message as sent."""
        found = self.sensitive(shown)
        if not found:
            return question(shown, language)
        screen = self._screen

        def hidden(value: str) -> str:
            return screen.text(value, leaving=True) or value

        displayed = dataclasses.replace(
            shown,
            subject=hidden(shown.subject),
            body=hidden(shown.body),
            html=None if shown.html is None else hidden(shown.html),
            files=tuple(ShownFile(hidden(f.name), f.octets) for f in shown.files),
        )
        return question(shown, language, sensitive=found, displayed=displayed)

    def kept(self, account_id: str, kept: KeptDraft) -> Settled[R] | None:
        """A repeat of a call kept as a draft that is still held or was given up (a sent one
        is answered with its record by the caller of this step). The held draft is answered
        as the first call answered it, and its alert is not raised again; a draft the owner
        deleted was the owner's choice not to send, so nothing is sent and nobody asked."""
        if kept.life is KeptLife.GIVEN_UP:
            return Settled(Status.CANCELLED, account_id)
        if kept.life is not KeptLife.HELD:
            return None
        reason = self._alerts.held_reason(alert_key(kept.draft_id))
        return Settled(Status.DRAFT, account_id, draft_id=kept.draft_id, reason=reason)

    def _unattended(
        self,
        prepared: Prepared[M],
        save_draft: Callable[[M], str],
        reason: str = UNAVAILABLE_REASON,
    ) -> Settled[R]:
        account_id = prepared.shown.account_id
        draft_id = save_draft(prepared.message)
        alert = OwnerAlert(
            key=alert_key(draft_id),
            account_id=account_id,
            draft_id=draft_id,
            reason=reason,
            raised_at=self._clock(),
        )
        try:
            recorded = self._alerts.raise_alert(alert)
        except Exception as error:
            log.error("confirmation.alert_not_recorded", error_type=type(error).__name__)
            raise Refusal(
                Code.DRAFT_SAVED_OWNER_NOT_ALERTED,
                f"The message was kept as draft {draft_id} and nothing was sent, but the "
                "owner could not be alerted to it.",
            ) from None
        if recorded:
            # Pushed to the operator as well as kept for `mfctl alerts list`: the account and
            # the alert's key, never anything of the message.
            log.warning(
                "confirmation.owner_alert_raised",
                account=account_id,
                alert=alert.key,
                reason=alert.reason,
            )
            self._raised(alert)
        return Settled(Status.DRAFT, account_id, draft_id=draft_id, reason=reason)


def _sensitive_refusal(found: frozenset[SensitiveCategory]) -> Refusal:
    names = ", ".join(c.value for c in SensitiveCategory if c in found)
    return Refusal(
        Code.OUTGOING_SENSITIVE_CONTENT,
        f"The message carries sensitive content ({names}) in its subject, text or file "
        "names, and this deployment does not send such mail unasked "
        "(SensitiveContent.Outgoing); nothing was queued.",
    )


def _logged(answer: Answer) -> str:
    if answer.kind is AnswerKind.CHOSEN and answer.choice is not None:
        return answer.choice.value
    return answer.kind.value
