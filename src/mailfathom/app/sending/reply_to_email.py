"""reply_to_email: answer an email this deployment holds, from the account that received it.

Who the reply reaches, the subject, the threading fields and the quotation are read from the
stored email (`answered_email`); the caller writes only its text and may copy others in.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from mailfathom.app.confirmation.confirmed_sending import Settled
from mailfathom.app.confirmation.ports import Confirmation
from mailfathom.app.sending import response_derivation as derive
from mailfathom.app.sending import rules as sending_rules
from mailfathom.app.sending.answered_email import AnsweredEmails
from mailfathom.app.sending.confirmable import Outgoing
from mailfathom.app.sending.ports import AuthoredMessage
from mailfathom.app.sending.submission import Submission
from mailfathom.app.shared.authorization import Permissions
from mailfathom.domain import addresses, recipient_policy
from mailfathom.domain.access import Caller, Permission
from mailfathom.domain.codes import Code
from mailfathom.domain.drafts import Answering
from mailfathom.domain.errors import Refusal
from mailfathom.domain.outgoing import AddressField, OutgoingKind, OutgoingRecord, Recipient

# An answer quotes the message it answers, and no permission implies another.
PERMISSIONS: Permissions = frozenset({Permission.SEND, Permission.MAIL_READ})


@dataclass(frozen=True, slots=True)
class ReplyRequest:
    stored_email_id: object
    everyone: bool
    plain_text_body: object
    idempotency_key: object
    cc: Iterable[object] | None = None
    html_body: object = None
    language: object = None


class EmailReply:
    def __init__(self, submission: Submission, answered: AnsweredEmails) -> None:
        self._submission = submission
        self._answered = answered

    def reply(self, caller: Caller, request: ReplyRequest) -> OutgoingRecord:
        """Write the send of a caller whose entry asks nobody first."""
        return self._submission.unconfirmed(caller, self._prepare(caller, request))

    def settle(
        self, caller: Caller, request: ReplyRequest, confirmation: Confirmation
    ) -> Settled[OutgoingRecord]:
        return self._submission.settle(
            caller, confirmation, request.language, lambda: self._prepare(caller, request)
        )

    def _prepare(self, caller: Caller, request: ReplyRequest) -> Outgoing:
        config = self._submission.config
        answer = self._answered.begin(
            caller, PERMISSIONS, config, request.stored_email_id, request.idempotency_key
        )
        bounds, original, sender = config.mail_delivery, answer.original, answer.sender
        to, cc = derive.reply_audience(
            original.row, request.everyone, sender.account.own_addresses()
        )
        derived = [_derived(a) for a in to + cc]
        written = sending_rules.address_list(request.cc, "cc")
        recipients = _merged(
            [Recipient(AddressField.TO, a) for a in derived[: len(to)]]
            + [Recipient(AddressField.CC, a) for a in derived[len(to) :]]
            + [Recipient(AddressField.CC, a) for a in written],
            bounds.max_recipient_count,
        )
        text = sending_rules.bodies(
            request.plain_text_body, request.html_body, bounds.max_body_characters
        )
        recipient_policy.admit(bounds.recipient_policy, [r.address for r in recipients])
        recipient_policy.vouch(config, written, self._submission.recipients)
        in_reply_to, references = derive.threading_fields(original.row)
        message = AuthoredMessage(
            from_address=sender.address,
            from_name=sender.delivery.display_name,
            to=tuple(r.address for r in recipients if r.field is AddressField.TO),
            cc=tuple(r.address for r in recipients if r.field is AddressField.CC),
            subject=derive.reply_subject(original.row.summary.subject),
            plain_text=derive.reply_text(text.plain, original.row, bounds.max_body_characters),
            html=text.html,
            in_reply_to=in_reply_to,
            references=references,
        )
        return Outgoing(
            OutgoingKind.REPLY,
            answer.account_id,
            answer.key,
            message,
            tuple(recipients),
            answering=Answering.EVERYONE if request.everyone else Answering.SENDER_ONLY,
            answered_email_id=original.row.summary.stored_email_id,
            derived=frozenset(a.lower() for a in derived),
        )


def _derived(address: str) -> str:
    """A recipient taken from the answered email, which must still be one a message can be
    sent to."""
    try:
        return addresses.plain_address(address, "the recipients derived from the email")
    except Refusal:
        raise Refusal(
            Code.MESSAGE_FIELD_NOT_COMPOSABLE,
            "A recipient derived from the answered email is not a plain ASCII address; this "
            "deployment cannot send to it.",
        ) from None


def _merged(recipients: list[Recipient], max_count: int) -> tuple[Recipient, ...]:
    seen: set[str] = set()
    kept: list[Recipient] = []
    for r in recipients:
        if r.address.lower() not in seen:
            seen.add(r.address.lower())
            kept.append(r)
    if not kept:
        raise Refusal(
            Code.MESSAGE_FIELD_NOT_COMPOSABLE, "The answered email names nobody to reply to."
        )
    if len(kept) > max_count:
        raise Refusal(
            Code.MESSAGE_TOO_LARGE,
            f"The reply is addressed to more than {max_count} recipients, the most this "
            "deployment sends one message to.",
        )
    return tuple(kept)
