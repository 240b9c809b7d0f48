"""Ports of the confirmation step: asking a person, keeping a draft, alerting the owner.

The question goes to whoever the caller's client puts it in front of. A use case never holds
a mail server connection while it waits: everything it asks about is composed from the local
store and written down only after the answer.
"""

from __future__ import annotations

import enum
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, TypeVar

from mailfathom.domain.access import Caller


class Choice(enum.Enum):
    """The three answers a person is offered, in the order they are offered."""

    SEND = "send"
    SAVE_DRAFT = "saveDraft"
    CANCEL = "cancel"


class AnswerKind(enum.Enum):
    CHOSEN = "chosen"
    # The person declined to answer, or dismissed the question.
    DECLINED = "declined"
    # No answer came within the deployment's time for one.
    EXPIRED = "expired"
    # An answer came that is none of the three choices, or no answer at all.
    NOT_UNDERSTOOD = "notUnderstood"
    # The client cannot put a question to a person.
    UNAVAILABLE = "unavailable"


@dataclass(frozen=True, slots=True)
class Question:
    """What a person is shown. `text` is plain text to be shown as it stands (never as
    markup); `choices` are the three answers with their labels, in order; `binding` is the
    SHA-256 (hex) of what the message would be if sent now, which the answer is bound to."""

    language: str
    text: str
    choice_title: str
    choices: tuple[tuple[Choice, str], ...]
    binding: str


@dataclass(frozen=True, slots=True)
class Answer:
    """A person's answer. `binding` is the binding of the question the person saw, which is
    not necessarily the question last put (a question asked in an earlier round of the same
    call is answered in a later one)."""

    kind: AnswerKind
    binding: str = ""
    choice: Choice | None = None


class QuestionOutstanding(Exception):
    """Raised by `Confirmation.ask` when the question is put once this run of the call has
    ended, and the call is run again carrying the person's answer: no thread waits for a
    person. Nothing has been written by then."""

    def __init__(self, question: Question) -> None:
        super().__init__("a question is outstanding")
        self.question = question


class Confirmation(Protocol):
    def ask(self, question: Question) -> Answer:
        """Put the question to a person and answer what they chose. Called off the event
        loop; may block. Never raises for what a person or a client answered: a refusal, a
        timeout, an answer that is none of the choices are all `Answer`s. May raise
        `QuestionOutstanding` (see there)."""
        ...


M_contra = TypeVar("M_contra", contravariant=True)


class KeptLife(enum.Enum):
    HELD = "held"
    SENT = "sent"
    # The owner deleted it: the owner chose not to send it.
    GIVEN_UP = "givenUp"


@dataclass(frozen=True, slots=True)
class KeptDraft:
    """The draft an earlier call with the same idempotency key kept, and what became of it
    since: still held, sent as `outgoing_id`, or given up."""

    draft_id: str
    life: KeptLife
    outgoing_id: uuid.UUID | None = None


class DraftSaver(Protocol[M_contra]):
    def save(self, caller: Caller, message: M_contra) -> str:
        """Keep `message` as a draft of the account it would be sent from; answer the draft's
        identifier. Raises a `MailFathomError` when no draft could be kept (nothing is kept
        then)."""
        ...

    def kept(self, caller: Caller, message: M_contra) -> KeptDraft | None:
        """The draft this same sending call (caller, account, kind, idempotency key) was
        kept as before, whatever became of it; None when it never was."""
        ...


@dataclass(frozen=True, slots=True)
class OwnerAlert:
    """A draft waiting for the owner because nobody could be asked. `key` is `draft:` and the
    SHA-256 of the draft's identifier: one alert per draft. Nothing of the message is kept."""

    key: str
    account_id: str
    draft_id: str
    reason: str
    raised_at: datetime
    dismissed_at: datetime | None = None


class OwnerAlerts(Protocol):
    def raise_alert(self, alert: OwnerAlert) -> bool:
        """Record the alert and answer True; one already held under its key is left as it is,
        and False answered (of racing raises of one alert, exactly one answers True). Raises
        any exception when it could not be recorded."""
        ...

    def held_reason(self, key: str) -> str | None:
        """The reason of the alert recorded under `key`, dismissed or not; None when no
        alert is."""
        ...

    def listing(self, include_dismissed: bool, limit: int) -> list[OwnerAlert]:
        """The newest alerts first."""
        ...

    def waiting(self) -> list[OwnerAlert]:
        """Every alert still waiting, newest first: undismissed, its draft live."""
        ...

    def find_waiting(self, key: str) -> OwnerAlert | None:
        """The alert under `key` while it waits (undismissed, its draft live), or None."""
        ...

    def dismiss(self, key: str, now: datetime) -> bool:
        """Mark the alert dismissed; False when no undismissed alert is held under `key`."""
        ...


@dataclass(frozen=True, slots=True)
class ViewedMessage:
    """A composed message as a person reads it: the header rows as written (decoded), the
    plain text and the HTML alternative as sent, and each file's name and decoded size."""

    sender: str
    to: tuple[str, ...]
    cc: tuple[str, ...]
    subject: str
    body: str
    html: str | None
    files: tuple[tuple[str, int], ...]


class MessageViewer(Protocol):
    def view(self, mime: bytes) -> ViewedMessage:
        """Read a message this deployment composed. Never raises for one it composed."""
        ...
