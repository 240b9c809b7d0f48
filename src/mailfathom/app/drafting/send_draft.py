"""send_draft: queue the message a draft holds, exactly as it stands.

The promotion writes an ordinary outgoing record carrying the draft's own bytes (a message
composed again would be a second message with a second Message-ID). Every sending bound is
asked now rather than when the draft was written: sending on for the account, the recipient
policy and vouching, the recipient count, the body size, the files' count and sizes as the
draft store lists them, the composed message's size and the ceilings. A draft addressed to
nobody is 53010. A refused promotion leaves the draft as it was.

`sendAfter` is checked before the draft is looked up (see `sending.scheduling`), and the record
is written not due before it. It belongs to the send, not to the draft: a repeated call answers
the first record as it stands, whatever instant it names, exactly as a repeated call with no
instant does; cancel_outgoing_email is what withdraws the first one.

The draft is the identity of the send: the record's key is derived from the draft and its
revision in a form no caller's idempotencyKey can take (callers' keys carry no control
character), so racing or repeated calls queue one message and each answers that record. The
send is written and the draft marked sent as it in one transaction of the outbox: a call never
writes a send it would have to withdraw again (a withdrawal can lose to the delivery pass, and
the message leave while the call says nothing was sent), and what it answers is what the
outbox holds.
"""

from __future__ import annotations

import hashlib
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
from mailfathom.app.confirmation.ports import Confirmation, MessageViewer
from mailfathom.app.confirmation.question import ShownFile, ShownMessage
from mailfathom.app.drafting.composition import draft_identifier, hold_to_message_size, not_held
from mailfathom.app.drafting.ports import DraftStore
from mailfathom.app.sending import ceilings, scheduling
from mailfathom.app.sending import rules as sending_rules
from mailfathom.app.sending.ports import (
    CeilingReached,
    DraftMovedOn,
    NewOutgoing,
    OutboxStore,
    PromotedDraft,
)
from mailfathom.app.sending.rules import SendingAccount
from mailfathom.app.shared.authorization import Permissions, require
from mailfathom.app.shared.mailbox_selection import ServedAccount
from mailfathom.domain import recipient_policy
from mailfathom.domain.access import Caller, ConfirmationMode, Permission
from mailfathom.domain.codes import Code
from mailfathom.domain.config import DeploymentConfig
from mailfathom.domain.drafts import Answering, Draft, DraftLife
from mailfathom.domain.errors import PermissionDenied, Refusal
from mailfathom.domain.outgoing import AddressField, OutgoingKind, OutgoingRecord, Recipient
from mailfathom.domain.recipient_policy import RecipientRecords

PERMISSIONS: Permissions = frozenset({Permission.SEND})

_KINDS = {
    None: OutgoingKind.NEW,
    Answering.SENDER_ONLY: OutgoingKind.REPLY,
    Answering.EVERYONE: OutgoingKind.REPLY,
    Answering.FORWARD: OutgoingKind.FORWARD,
}
# Promotions tried again when an edit lands between reading a draft and writing its send.
_ATTEMPTS = 3


def _now() -> datetime:
    return datetime.now(UTC)


def promotion_key(draft: Draft) -> str:
    return f"\x1fdraft {draft.draft_id} {draft.revision}"


class DraftPromotion:
    def __init__(
        self,
        config: DeploymentConfig,
        store: DraftStore,
        outbox: OutboxStore,
        served: Sequence[ServedAccount],
        confirmed: ConfirmedSending,
        viewer: MessageViewer,
        clock: Callable[[], datetime] = _now,
        recipients: RecipientRecords | None = None,
    ) -> None:
        """`clock`: the one the outbox's due times are compared on (the store's), so the
        hold and `sendAfter` are measured on it."""
        self._config = config
        self._recipients = recipients
        self._store = store
        self._outbox = outbox
        self._served = frozenset(a.account_id for a in served)
        self._confirmed = confirmed
        self._viewer = viewer
        self._clock = clock

    def send(self, caller: Caller, draft_id: object, send_after: object = None) -> OutgoingRecord:
        """Promote the draft for a caller whose entry asks nobody first (`settle` asks)."""
        require(caller, PERMISSIONS)
        if caller.confirmation is not ConfirmationMode.NONE:
            raise PermissionDenied(
                "The caller's entry asks a person before sending; this path asks nobody."
            )
        instant = scheduling.send_after(send_after, self._clock())
        identifier = draft_identifier(draft_id)
        for _ in range(_ATTEMPTS):
            draft = self._store.find(identifier)
            if draft is None or draft.account_id not in self._served:
                raise not_held()
            if draft.life is DraftLife.SENT:
                return self._send_of(draft)
            if draft.life is not DraftLife.LIVE:
                raise not_held()
            self._confirmed.refuse_sensitive(self._shown(draft, instant))
            record = self._promote(caller, draft, instant)
            if record is not None:
                return record
        raise not_held()

    def _promote(
        self, caller: Caller, draft: Draft, instant: datetime | None
    ) -> OutgoingRecord | None:
        """Write the send of the draft as read and mark the draft sent as it, in one
        transaction of the outbox: the record that stands, or None when the draft moved on
        from that revision first (nothing is written then)."""
        config = self._config
        bounds = config.mail_delivery
        sender = self._checked(draft)
        now = self._clock()
        new = NewOutgoing(
            outgoing_id=uuid.uuid4(),
            account_id=draft.account_id,
            idempotency_key=promotion_key(draft),
            caller=caller.label,
            kind=_KINDS[draft.answering],
            queued_at=now,
            not_before=scheduling.not_before(now + timedelta(seconds=bounds.hold_seconds), instant),
            message_id=draft.message_id,
            envelope_from=sender.address,
            mime=draft.mime,
            recipients=tuple(Recipient(r.field, r.address) for r in draft.recipients),
            send_after=instant,
        )
        limits = ceilings.ceilings(config, draft.account_id, caller.label)
        try:
            record, _ = self._outbox.record(
                new, limits, promoting=PromotedDraft(draft.draft_id, draft.revision)
            )
        except CeilingReached as reached:
            raise ceilings.ceiling_refusal(reached.name) from None
        except DraftMovedOn:
            return None
        return record

    def _send_of(self, draft: Draft) -> OutgoingRecord:
        """The send a sent draft became, as the outbox holds it now."""
        record = None if draft.outgoing_id is None else self._outbox.find(draft.outgoing_id)
        if record is None:
            raise not_held()
        return record

    def _sent(self, identifier: uuid.UUID) -> OutgoingRecord | None:
        """The send of a served draft that has been sent, or None while it has not."""
        draft = self._store.find(identifier)
        if draft is None or draft.account_id not in self._served:
            return None
        return self._send_of(draft) if draft.life is DraftLife.SENT else None

    def _checked(self, draft: Draft) -> SendingAccount:
        """Every bound a promotion asks, without writing anything."""
        config = self._config
        bounds = config.mail_delivery
        sender = sending_rules.sending_account(config, draft.account_id)
        if not draft.recipients:
            raise Refusal(
                Code.DRAFT_WITHOUT_RECIPIENTS,
                "The draft is addressed to nobody; name recipients with update_draft first.",
            )
        if len(draft.recipients) > bounds.max_recipient_count:
            raise Refusal(
                Code.MESSAGE_TOO_LARGE,
                f"The draft is addressed to more than {bounds.max_recipient_count} recipients, "
                "the most this deployment sends one message to.",
            )
        if draft.body_characters > bounds.max_body_characters:
            raise Refusal(
                Code.MESSAGE_TOO_LARGE,
                f"The body is longer than {bounds.max_body_characters} characters, the most "
                "this deployment sends.",
            )
        _files_within(config, draft)
        recipient_policy.admit(bounds.recipient_policy, [r.address for r in draft.recipients])
        recipient_policy.vouch(
            config, [r.address for r in draft.recipients if r.written], self._recipients
        )
        return sender

    # -- a caller whose entry asks a person first ------------------------------------------

    def settle(
        self,
        caller: Caller,
        draft_id: object,
        confirmation: Confirmation,
        language: object,
        send_after: object = None,
    ) -> Settled[OutgoingRecord]:
        """send_draft through the confirmation step: the draft's own bytes are shown, with
        the instant it leaves after when one was given (shown whether or not it is still
        ahead, so a question answered after its instant is still the question asked), and an
        answer of Send promotes exactly the revision shown. An edit between the question and
        the answer is refused (59004); Save draft leaves the draft as it is. A draft already
        sent, before the question or while the person decided, is answered with its send,
        whatever the answer: nobody is told nothing left when it did."""
        if caller.confirmation is ConfirmationMode.NONE:
            held = self._kept_unasked(caller, draft_id, send_after)
            if held is not None:
                return held
            record = self.send(caller, draft_id, send_after)
            return Settled(Status.QUEUED, record.account_id, record=record)
        require(caller, PERMISSIONS)
        instant = scheduling.send_after(send_after, self._clock())
        identifier = draft_identifier(draft_id)
        first = self._sent(identifier)
        if first is not None:
            # Asked again after it was sent: the first record, and nothing more to confirm.
            return Settled(Status.QUEUED, first.account_id, record=first)

        def prepare() -> Prepared[Draft]:
            draft = self._store.find(identifier)
            if draft is None or draft.account_id not in self._served:
                raise not_held()
            if draft.life is not DraftLife.LIVE:
                raise not_held()
            self._checked(draft)
            return Prepared(self._shown(draft, instant), draft)

        def sent_meanwhile(draft: Draft) -> Settled[OutgoingRecord] | None:
            record = self._sent(draft.draft_id)
            return None if record is None else Settled(Status.QUEUED, record.account_id, record)

        return self._confirmed.settle(
            caller,
            confirmation,
            wording.language(language),
            prepare,
            send=lambda draft: self._promote_shown(caller, draft, instant),
            save_draft=lambda draft: str(draft.draft_id),
            repeated=sent_meanwhile,
        )

    def _kept_unasked(
        self, caller: Caller, draft_id: object, send_after: object
    ) -> Settled[OutgoingRecord] | None:
        """A live draft carrying sensitive content, for a caller who asks nobody, under
        `Outgoing = "keepDraft"`: it stays a draft and the owner is alerted (refused 53013
        otherwise). None when it may be sent as it stands, or is no live draft."""
        require(caller, PERMISSIONS)
        instant = scheduling.send_after(send_after, self._clock())
        draft = self._store.find(draft_identifier(draft_id))
        if draft is None or draft.account_id not in self._served:
            return None
        if draft.life is not DraftLife.LIVE:
            return None
        return self._confirmed.unasked(
            Prepared(self._shown(draft, instant), draft),
            save_draft=lambda kept: str(kept.draft_id),
            repeated=lambda _: None,
        )

    def _promote_shown(
        self, caller: Caller, draft: Draft, instant: datetime | None
    ) -> OutgoingRecord:
        record = self._promote(caller, draft, instant)
        if record is not None:
            return record
        sent = self._sent(draft.draft_id)
        if sent is not None:
            return sent  # another call sent the draft first: its one send
        raise Refusal(
            Code.CONFIRMATION_OUTDATED,
            "The draft changed after the person was shown it; nothing was sent.",
        )

    def shown(self, draft: Draft) -> ShownMessage:
        """The draft as `settle` shows it to a person when no `sendAfter` is asked: what a
        person deciding elsewhere (the owner's console) is shown, and binds their Send to."""
        return self._shown(draft, None)

    def _shown(self, draft: Draft, instant: datetime | None) -> ShownMessage:
        viewed = self._viewer.view(draft.mime)
        return ShownMessage(
            account_id=draft.account_id,
            sender=viewed.sender,
            to=viewed.to,
            cc=viewed.cc,
            bcc=tuple(r.address for r in draft.recipients if r.field is AddressField.BCC),
            subject=viewed.subject,
            files=tuple(ShownFile(name, octets) for name, octets in viewed.files),
            body=viewed.body,
            html=viewed.html,
            envelope=tuple(f"{r.field.value}:{r.address}" for r in draft.recipients),
            unshown=(hashlib.sha256(draft.mime).hexdigest(),),
            leaves_after=instant,
        )


def _files_within(config: DeploymentConfig, draft: Draft) -> None:
    """The draft's files and message held to today's bounds (51014 naming the bound)."""
    bounds = config.mail_delivery
    sizes = [f.size_octets for f in draft.files]
    if len(sizes) > bounds.max_attachment_count:
        raise Refusal(
            Code.MESSAGE_TOO_LARGE,
            f"A message carries at most {bounds.max_attachment_count} files "
            "(MailDelivery.MaxAttachmentCount).",
        )
    if any(size > bounds.max_attachment_octets for size in sizes):
        raise Refusal(
            Code.MESSAGE_TOO_LARGE,
            f"A file is larger than {bounds.max_attachment_octets} octets "
            "(MailDelivery.MaxAttachmentSize).",
        )
    if sum(sizes) > bounds.max_total_attachment_octets:
        raise Refusal(
            Code.MESSAGE_TOO_LARGE,
            f"The files are larger together than {bounds.max_total_attachment_octets} octets "
            "(MailDelivery.MaxTotalAttachmentSize).",
        )
    hold_to_message_size(config, len(draft.mime))
