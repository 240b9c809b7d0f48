"""get_outgoing_email: one send, as the caller that queued it.

A send another caller queued and a send nobody queued are one answer (53007), so an
identifier alone never tells a caller that this mailbox sent something. Text that is no
identifier at all is told apart (51016): that is true whatever was queued.
"""

from __future__ import annotations

import uuid

from mailfathom.app.sending.ports import OutboxStore
from mailfathom.app.shared.authorization import Permissions, require
from mailfathom.domain.access import Caller, Permission
from mailfathom.domain.codes import Code
from mailfathom.domain.errors import Refusal
from mailfathom.domain.outgoing import OutgoingRecord

PERMISSIONS: Permissions = frozenset({Permission.SEND})

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


def own(record: OutgoingRecord | None, caller: Caller) -> OutgoingRecord:
    if record is None or record.caller != caller.label:
        raise Refusal(_NOT_KNOWN.code, _NOT_KNOWN.message)
    return record


class OutgoingMailReader:
    def __init__(self, outbox: OutboxStore) -> None:
        self._outbox = outbox

    def read(self, caller: Caller, outgoing_email_id: object) -> OutgoingRecord:
        require(caller, PERMISSIONS)
        identifier = outgoing_identifier(outgoing_email_id)
        return own(self._outbox.find(identifier), caller)
