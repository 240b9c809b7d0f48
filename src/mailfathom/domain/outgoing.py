"""Mail this deployment was asked to send: the outgoing record and its recipients.

A record moves through stages a delivery pass and a cancellation drive, and only forwards:
queued → sending → sent | failed, or queued → cancelled. A send that failed temporarily goes
back to queued to wait for its next attempt. Callers read the stage under its published name
(`failed` is published as `refused`).
"""

from __future__ import annotations

import enum
import uuid
from dataclasses import dataclass
from datetime import datetime


class Stage(enum.Enum):
    QUEUED = "queued"
    SENDING = "sending"
    SENT = "sent"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def published(self) -> str:
        return "refused" if self is Stage.FAILED else self.value


class AddressField(enum.Enum):
    TO = "to"
    CC = "cc"
    BCC = "bcc"


class RecipientState(enum.Enum):
    PENDING = "pending"
    ACCEPTED = "accepted"
    REFUSED = "refused"


class OutgoingKind(enum.Enum):
    NEW = "new"
    REPLY = "reply"
    FORWARD = "forward"


@dataclass(frozen=True, slots=True)
class Recipient:
    field: AddressField
    address: str
    state: RecipientState = RecipientState.PENDING
    last_reply_code: int | None = None


@dataclass(frozen=True, slots=True)
class OutgoingRecord:
    """What is known about one send. `caller` is the principal it was queued under, stamped
    when it was written down; `failure_code` the last attempt's failure (a `DeliveryCode`);
    `send_after` the instant the caller asked it to wait for, if any."""

    outgoing_id: uuid.UUID
    account_id: str
    caller: str
    kind: OutgoingKind
    stage: Stage
    attempt_count: int
    queued_at: datetime
    recipients: tuple[Recipient, ...]
    failure_code: int | None = None
    finished_at: datetime | None = None
    send_after: datetime | None = None
