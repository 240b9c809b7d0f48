"""The operator's hold on queued sends (`mfctl outbox`): list them, read one, withdraw one
whoever queued it. It answers with what a record holds, never the message itself."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from mailfathom.app.sending.ports import OutboxListing, OutboxStore
from mailfathom.domain.outgoing import OutgoingRecord, Stage


class OutboxAdministration:
    def __init__(
        self, outbox: OutboxStore, clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    ) -> None:
        self._outbox = outbox
        self._clock = clock

    def listing(self, limit: int, stages: Sequence[Stage] | None = None) -> list[OutboxListing]:
        """The newest records first."""
        return self._outbox.listing(limit, stages)

    def find(self, outgoing_id: uuid.UUID) -> OutgoingRecord | None:
        return self._outbox.find(outgoing_id)

    def cancel(self, outgoing_id: uuid.UUID) -> OutgoingRecord | None:
        """Withdraw the send if it still waits; the record as the statement left it."""
        return self._outbox.operator_cancel(outgoing_id, self._clock())
