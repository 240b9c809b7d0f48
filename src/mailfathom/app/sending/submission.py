"""What the sending tools share once a message is settled: the confirmation step, then
compose it, count the ceilings and write it down with its record, in that order."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta

from mailfathom.app.confirmation import wording
from mailfathom.app.confirmation.confirmed_sending import (
    ConfirmedSending,
    Prepared,
    Settled,
    Status,
)
from mailfathom.app.confirmation.ports import Confirmation, DraftSaver, KeptLife
from mailfathom.app.sending import ceilings
from mailfathom.app.sending.confirmable import Outgoing, shown
from mailfathom.app.sending.ports import (
    AuthoredMessage,
    CeilingReached,
    MessageComposer,
    NewOutgoing,
    OutboxStore,
)
from mailfathom.domain.access import Caller, ConfirmationMode
from mailfathom.domain.codes import Code
from mailfathom.domain.config import DeploymentConfig
from mailfathom.domain.errors import MailFathomError, PermissionDenied, Refusal
from mailfathom.domain.outgoing import OutgoingKind, OutgoingRecord, Recipient
from mailfathom.domain.recipient_policy import RecipientRecords


def _now() -> datetime:
    return datetime.now(UTC)


class Submission:
    """What the three sending tools share once a message is settled: the confirmation step,
    then compose it, count the ceilings and write it down with its record, in that order."""

    def __init__(
        self,
        config: DeploymentConfig,
        outbox: OutboxStore,
        composer: MessageComposer,
        clock: Callable[[], datetime] = _now,
        *,
        confirmed: ConfirmedSending | None = None,
        drafts: DraftSaver[Outgoing] | None = None,
        recipients: RecipientRecords | None = None,
    ) -> None:
        """`confirmed` and `drafts` are the confirmation step and where it keeps drafts; a
        submission put together without them writes sends (`write`) and settles none.
        `recipients` is what vouches for an address beyond the deployment's own. `clock`
        is the one the outbox's due times are compared on (the store's, shared by every
        process that delivers): a hold measured on another clock would end early or late
        by the difference."""
        self.config = config
        self.recipients = recipients
        self._outbox = outbox
        self._composer = composer
        self._confirmed = confirmed
        self._drafts = drafts
        self._clock = clock

    def settle(
        self,
        caller: Caller,
        confirmation: Confirmation,
        language: object,
        prepare: Callable[[], Outgoing],
    ) -> Settled[OutgoingRecord]:
        """The message `prepare` settles, through the confirmation step: queued, kept as a
        draft, or cancelled. `prepare` checks everything and writes nothing."""
        chosen = wording.language(language)
        step, drafts = self._confirmed, self._drafts
        if step is None or drafts is None:
            raise PermissionDenied("This submission has no confirmation step; it settles nothing.")

        def prepared() -> Prepared[Outgoing]:
            outgoing = prepare()
            return Prepared(shown(outgoing), outgoing)

        return step.settle(
            caller,
            confirmation,
            chosen,
            prepared,
            send=lambda o: self.write_outgoing(caller, o),
            save_draft=lambda o: drafts.save(caller, o),
            repeated=lambda o: self._repeated(step, drafts, caller, o),
        )

    def _repeated(
        self,
        step: ConfirmedSending,
        drafts: DraftSaver[Outgoing],
        caller: Caller,
        outgoing: Outgoing,
    ) -> Settled[OutgoingRecord] | None:
        """How an earlier call with this key ended, answered without asking anybody: the
        send the account holds under the key, as it stands now (queued, sent, refused or
        withdrawn), as a repeated call of a caller asked nobody is answered; else the draft
        the call was kept as, and once that draft was sent, its send."""
        queued = self._outbox.find_key(outgoing.account_id, outgoing.key)
        if queued is not None:
            return Settled(Status.QUEUED, queued.account_id, record=_own(caller, queued))
        kept = drafts.kept(caller, outgoing)
        if kept is None:
            return None
        if kept.life is KeptLife.SENT and kept.outgoing_id is not None:
            record = self._outbox.find(kept.outgoing_id)
            if record is None:
                # Records are never removed; without it nothing true can be answered.
                raise MailFathomError("The send a kept draft became is not in the outbox.")
            return Settled(Status.QUEUED, record.account_id, record=record)
        return step.kept(outgoing.account_id, kept)

    def unconfirmed(self, caller: Caller, outgoing: Outgoing) -> OutgoingRecord:
        """Write the send of a caller whose entry asks nobody before sending."""
        if caller.confirmation is not ConfirmationMode.NONE:
            raise PermissionDenied(
                "The caller's entry asks a person before sending; this path asks nobody."
            )
        if self._confirmed is not None:
            self._confirmed.refuse_sensitive(shown(outgoing))
        return self.write_outgoing(caller, outgoing)

    def write_outgoing(self, caller: Caller, outgoing: Outgoing) -> OutgoingRecord:
        return self.write(
            caller,
            outgoing.kind,
            outgoing.account_id,
            outgoing.key,
            outgoing.message,
            outgoing.recipients,
        )

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
        return record if created else _own(caller, record)


def _own(caller: Caller, record: OutgoingRecord) -> OutgoingRecord:
    """The send under a repeated key, when it is this caller's. The key is unique per
    account, and a send under it that is another caller's is not this caller's to read
    back, so the key is refused instead."""
    if record.caller != caller.label:
        raise Refusal(
            Code.MESSAGE_FIELD_NOT_COMPOSABLE,
            "The idempotencyKey is already in use on this account; choose a new one for "
            "a new message.",
        )
    return record
