"""send_email: write a new message and its outgoing record down; transmit nothing.

The delivery pass offers the message to a server afterwards. What this call answers is the
record: queued for a new send, or whatever the first call with the same idempotency key led
to for a repeated one.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from mailfathom.app import sending_policy, sending_rules
from mailfathom.app.mailbox_selection import ServedAccount
from mailfathom.app.projection import require
from mailfathom.app.sending_ports import (
    AuthoredMessage,
    CeilingReached,
    MessageComposer,
    NewOutgoing,
    OutboxStore,
)
from mailfathom.domain.access import Caller, Permission
from mailfathom.domain.codes import Code
from mailfathom.domain.config import DeploymentConfig
from mailfathom.domain.errors import Refusal
from mailfathom.domain.outgoing import AddressField, OutgoingKind, OutgoingRecord, Recipient


@dataclass(frozen=True, slots=True)
class SendRequest:
    account: object
    to: Iterable[object] | None
    subject: object
    plain_text_body: object
    idempotency_key: object
    cc: Iterable[object] | None = None
    bcc: Iterable[object] | None = None
    html_body: object = None


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
        limits = sending_policy.ceilings(self.config, account_id, caller.label)
        try:
            record, created = self._outbox.record(new, limits)
        except CeilingReached as reached:
            raise sending_policy.ceiling_refusal(reached.name) from None
        if not created and record.caller != caller.label:
            # The key is unique per account, and the send under it is another caller's: it
            # is not this caller's to read back, so the key is refused instead.
            raise Refusal(
                Code.MESSAGE_FIELD_NOT_COMPOSABLE,
                "The idempotencyKey is already in use on this account; choose a new one for "
                "a new message.",
            )
        return record


class AuthoredMailSubmission:
    def __init__(self, submission: Submission, served: Sequence[ServedAccount]) -> None:
        self._submission = submission
        self._served = tuple(served)

    def send(self, caller: Caller, request: SendRequest) -> OutgoingRecord:
        require(caller, Permission.SEND)
        config = self._submission.config
        bounds = config.mail_delivery
        key = sending_rules.idempotency_key(request.idempotency_key)
        served = sending_rules.served_account(
            self._served, sending_rules.account_name(request.account)
        )
        sender = sending_rules.sending_account(config, served.account_id)
        recipients = sending_rules.recipients(
            request.to, request.cc, request.bcc, bounds.max_recipient_count
        )
        title = sending_rules.subject(request.subject)
        text = sending_rules.bodies(
            request.plain_text_body, request.html_body, bounds.max_body_characters
        )
        addresses = [r.address for r in recipients]
        sending_policy.admit(bounds.recipient_policy, addresses)
        sending_policy.vouch(config, addresses)
        message = AuthoredMessage(
            from_address=sender.address,
            from_name=sender.delivery.display_name,
            to=tuple(r.address for r in recipients if r.field is AddressField.TO),
            cc=tuple(r.address for r in recipients if r.field is AddressField.CC),
            subject=title,
            plain_text=text.plain,
            html=text.html,
        )
        return self._submission.write(
            caller, OutgoingKind.NEW, served.account_id, key, message, recipients
        )
