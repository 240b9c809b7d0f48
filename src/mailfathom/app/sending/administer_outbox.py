"""The operator's hold on queued sends (`mfctl outbox`): list them, read one, withdraw one
whoever queued it. It answers with what a record holds, never the message itself."""

from __future__ import annotations

import enum
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from mailfathom.app.sending.ports import OutboxListing, OutboxStore
from mailfathom.domain.outgoing import OutgoingRecord, Stage


class OutboxAdministration:
    def __init__(
        self, outbox: OutboxStore, clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    ) -> None:
        """`clock`: the one the outbox's due times are written and compared on (the
        store's, which every process sharing it reads)."""
        self._outbox = outbox
        self._clock = clock

    def now(self) -> datetime:
        """The time on the outbox's clock: what a send's hold and instant are measured on."""
        return self._clock()

    def listing(
        self, limit: int | None, stages: Sequence[Stage] | None = None
    ) -> list[OutboxListing]:
        """The newest records first (every one with `limit` None)."""
        return self._outbox.listing(limit, stages)

    def find(self, outgoing_id: uuid.UUID) -> OutgoingRecord | None:
        return self._outbox.find(outgoing_id)

    def cancel(self, outgoing_id: uuid.UUID) -> OutgoingRecord | None:
        """Withdraw the send if it still waits; the record as the statement left it."""
        return self._outbox.operator_cancel(outgoing_id, self._clock())

    def withdraw(self, outgoing_id: uuid.UUID) -> Withdrawal | None:
        """`cancel`, saying whether this withdrew the send or it had ended before (None when
        no send is held under the identifier). The outcome is read from the record the
        conditional statement left; the record read before only tells a send cancelled now
        from one cancelled earlier."""
        before = self._outbox.find(outgoing_id)
        after = self.cancel(outgoing_id)
        if after is None:
            return None
        if after.stage is Stage.CANCELLED:
            earlier = before is not None and before.stage is Stage.CANCELLED
            outcome = Withdrawn.ALREADY_ENDED if earlier else Withdrawn.NOW
        elif after.stage in (Stage.SENT, Stage.FAILED):
            outcome = Withdrawn.ALREADY_ENDED
        else:
            outcome = Withdrawn.IN_TRANSMISSION
        return Withdrawal(after, outcome)


class Withdrawn(enum.Enum):
    NOW = "now"
    # Sent, refused or cancelled before this request: nothing changed.
    ALREADY_ENDED = "already-ended"
    # A delivery pass holds the send: it is being handed over and cannot be withdrawn.
    IN_TRANSMISSION = "in-transmission"


@dataclass(frozen=True, slots=True)
class Withdrawal:
    record: OutgoingRecord
    outcome: Withdrawn
