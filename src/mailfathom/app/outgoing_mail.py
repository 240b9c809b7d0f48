"""get_outgoing_email and cancel_outgoing_email: one send, as the caller that queued it.

A send another caller queued and a send nobody queued are one answer (53007), so an
identifier alone never tells a caller that this mailbox sent something. Text that is no
identifier at all is told apart (51016): that is true whatever was queued.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, datetime

from mailfathom.app.projection import require
from mailfathom.app.sending_ports import OutboxStore
from mailfathom.domain.access import Caller, Permission
from mailfathom.domain.codes import Code
from mailfathom.domain.errors import Refusal
from mailfathom.domain.outgoing import OutgoingRecord, Stage

_NOT_KNOWN = Refusal(Code.OUTGOING_NOT_KNOWN, "No queued send this caller may be told about.")


def outgoing_identifier(value: object) -> uuid.UUID:
    if not isinstance(value, str) or not value.strip():
        raise Refusal(Code.NOT_AN_OUTGOING_IDENTIFIER, "The outgoingEmailId is blank.")
    try:
        parsed = uuid.UUID(value.strip())
    except ValueError:
        raise Refusal(
            Code.NOT_AN_OUTGOING_IDENTIFIER, "The outgoingEmailId is not an identifier."
        ) from None
    if parsed.int == 0:
        raise Refusal(
            Code.NOT_AN_OUTGOING_IDENTIFIER, "The outgoingEmailId is the all-zero identifier."
        )
    return parsed


def _own(record: OutgoingRecord | None, caller: Caller) -> OutgoingRecord:
    if record is None or record.caller != caller.label:
        raise Refusal(_NOT_KNOWN.code, _NOT_KNOWN.message)
    return record


class OutgoingMailReader:
    def __init__(self, outbox: OutboxStore) -> None:
        self._outbox = outbox

    def read(self, caller: Caller, outgoing_email_id: object) -> OutgoingRecord:
        require(caller, Permission.SEND)
        identifier = outgoing_identifier(outgoing_email_id)
        return _own(self._outbox.find(identifier), caller)


class OutgoingMailCancellation:
    def __init__(
        self, outbox: OutboxStore, clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    ) -> None:
        self._outbox = outbox
        self._clock = clock

    def cancel(self, caller: Caller, outgoing_email_id: object) -> OutgoingRecord:
        """Withdraw the send if it is still waiting. The outcome is read from the record the
        conditional statement left, never from what was read before it: a delivery pass may
        take the send in between, and then nothing was withdrawn (58001)."""
        require(caller, Permission.SEND)
        identifier = outgoing_identifier(outgoing_email_id)
        _own(self._outbox.find(identifier), caller)
        after = _own(self._outbox.cancel(identifier, self._clock()), caller)
        if after.stage is not Stage.CANCELLED:
            raise Refusal(
                Code.STATE_ALREADY_PASSED,
                "The send is being transmitted, was transmitted, or was given up on; nothing "
                "was withdrawn.",
            )
        return after
