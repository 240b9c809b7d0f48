"""What the sending tools share once a message is settled: compose it, count the ceilings
and write it down with its record, in that order."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta

from mailfathom.app.sending import ceilings
from mailfathom.app.sending.ports import (
    AuthoredMessage,
    CeilingReached,
    MessageComposer,
    NewOutgoing,
    OutboxStore,
)
from mailfathom.domain.access import Caller
from mailfathom.domain.codes import Code
from mailfathom.domain.config import DeploymentConfig
from mailfathom.domain.errors import Refusal
from mailfathom.domain.outgoing import OutgoingKind, OutgoingRecord, Recipient


def _now() -> datetime:
    return datetime.now(UTC)


class Submission:
    """What the three sending tools share once a message is settled: compose it, count the
    ceilings and write it down with its record, in that order."""

    def __init__(
        self,
        config: DeploymentConfig,
        outbox: OutboxStore,
        composer: MessageComposer,
        clock: Callable[[], datetime] = _now,
    ) -> None:
        self.config = config
        self._outbox = outbox
        self._composer = composer
        self._clock = clock

    def write(
        self,
        caller: Caller,
        kind: OutgoingKind,
        account_id: str,
        key: str,
        message: AuthoredMessage,
        recipients: Sequence[Recipient],
    ) -> OutgoingRecord:
        now = self._clock()
        composed = self._composer.compose(dataclasses.replace(message, sent_at=now))
        # Counted on the message as written, so the files it carries count as they travel.
        limit = self.config.mail_delivery.max_message_octets
        if len(composed.mime) > limit:
            raise Refusal(
                Code.MESSAGE_TOO_LARGE,
                f"The composed message is larger than {limit} octets "
                "(MailDelivery.MaxMessageSize).",
            )
        new = NewOutgoing(
            outgoing_id=uuid.uuid4(),
            account_id=account_id,
            idempotency_key=key,
            caller=caller.label,
            kind=kind,
            queued_at=now,
            not_before=now + timedelta(seconds=self.config.mail_delivery.hold_seconds),
            message_id=composed.message_id,
            envelope_from=message.from_address,
            mime=composed.mime,
            recipients=tuple(recipients),
        )
        limits = ceilings.ceilings(self.config, account_id, caller.label)
        try:
            record, created = self._outbox.record(new, limits)
        except CeilingReached as reached:
            raise ceilings.ceiling_refusal(reached.name) from None
        if not created and record.caller != caller.label:
            # The key is unique per account, and the send under it is another caller's: it
            # is not this caller's to read back, so the key is refused instead.
            raise Refusal(
                Code.MESSAGE_FIELD_NOT_COMPOSABLE,
                "The idempotencyKey is already in use on this account; choose a new one for "
                "a new message.",
            )
        return record
