"""The console's outbox: every send still waiting and the newest finished ones, as the owner
decides about them, and the owner's withdrawal of one that still waits.

It reads and withdraws through the operator's own use case (`mfctl outbox`), so the page
and the command can never disagree about what a send is or whether it may be withdrawn.
What it answers holds no message text: a record keeps none."""

from __future__ import annotations

import enum
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from mailfathom.app.sending.administer_outbox import OutboxAdministration, Withdrawal
from mailfathom.domain.codes import DeliveryCode
from mailfathom.domain.outgoing import OutgoingRecord, Stage

SHOWN = 200
"""How many finished sends the page lists, newest first, after every send still waiting."""

WAITING = (Stage.QUEUED, Stage.SENDING)
FINISHED = (Stage.SENT, Stage.FAILED, Stage.CANCELLED)


class SendState(enum.Enum):
    """What the owner reads about a send. `HELD` waits for its `sendAfter`; `UNKNOWN` was
    handed over with no answer, so nobody knows whether it went."""

    QUEUED = "queued"
    HELD = "held"
    SENDING = "sending"
    SENT = "sent"
    REFUSED = "refused"
    UNKNOWN = "outcome-unknown"
    CANCELLED = "cancelled"


@dataclass(frozen=True, slots=True)
class OutboxEntry:
    record: OutgoingRecord
    state: SendState

    @property
    def withdrawable(self) -> bool:
        """Still waiting, so a withdrawal may stop it (a delivery pass may still win)."""
        return self.state in (SendState.QUEUED, SendState.HELD)


def send_state(record: OutgoingRecord, now: datetime) -> SendState:
    if record.stage is Stage.QUEUED:
        held = record.send_after is not None and record.send_after > now
        return SendState.HELD if held else SendState.QUEUED
    if record.stage is Stage.FAILED:
        unknown = record.failure_code == DeliveryCode.OUTCOME_UNKNOWN
        return SendState.UNKNOWN if unknown else SendState.REFUSED
    return {
        Stage.SENDING: SendState.SENDING,
        Stage.SENT: SendState.SENT,
        Stage.CANCELLED: SendState.CANCELLED,
    }[record.stage]


class ConsoleOutbox:
    def __init__(
        self,
        administration: OutboxAdministration,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        """`clock`: the outbox's, on which a send is held until its `sendAfter`."""
        self._administration = administration
        self._clock = clock

    def entries(self, limit: int = SHOWN) -> list[OutboxEntry]:
        """Every send not yet finished (queued, held, being sent), newest first, then the
        newest `limit` finished ones: a send the owner may still withdraw is never left off
        however many newer ones went."""
        now = self._clock()
        listing = self._administration.listing(None, WAITING)
        listing += self._administration.listing(limit, FINISHED)
        return [OutboxEntry(e.record, send_state(e.record, now)) for e in listing]

    def withdraw(self, outgoing_id: str) -> Withdrawal | None:
        """The operator's withdrawal (`mfctl outbox cancel`); None when the text names no
        send held here."""
        try:
            identifier = uuid.UUID(outgoing_id)
        except ValueError:
            return None
        return self._administration.withdraw(identifier)
