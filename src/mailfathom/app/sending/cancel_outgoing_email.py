"""cancel_outgoing_email: withdraw a send the caller queued, while it still waits.

What a caller may stop is exactly what it was allowed to start; a send another caller queued
answers as one nobody queued (53007), as get_outgoing_email does.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from mailfathom.app.sending.get_outgoing_email import outgoing_identifier, own
from mailfathom.app.sending.ports import OutboxStore
from mailfathom.app.shared.authorization import Permissions, require
from mailfathom.domain.access import Caller, Permission
from mailfathom.domain.codes import Code
from mailfathom.domain.errors import Refusal
from mailfathom.domain.outgoing import OutgoingRecord, Stage

PERMISSIONS: Permissions = frozenset({Permission.SEND})


class OutgoingMailCancellation:
    def __init__(
        self, outbox: OutboxStore, clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    ) -> None:
        """`clock`: the one the outbox's due times are written and compared on."""
        self._outbox = outbox
        self._clock = clock

    def cancel(self, caller: Caller, outgoing_email_id: object) -> OutgoingRecord:
        """Withdraw the send if it is still waiting. The outcome is read from the record the
        conditional statement left, never from what was read before it: a delivery pass may
        take the send in between, and then nothing was withdrawn (58001)."""
        require(caller, PERMISSIONS)
        identifier = outgoing_identifier(outgoing_email_id)
        own(self._outbox.find(identifier), caller)
        after = own(self._outbox.cancel(identifier, self._clock()), caller)
        if after.stage is not Stage.CANCELLED:
            raise Refusal(
                Code.STATE_ALREADY_PASSED,
                "The send is being transmitted, was transmitted, or was given up on; nothing "
                "was withdrawn.",
            )
        return after
