"""forward_email: send an email this deployment holds on to addresses the caller gives.

The subject, the forwarded text and the original's files are read from the stored email
(`answered_email`); the files are bounded by their stored sizes before anything is read.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from mailfathom.app.confirmation.confirmed_sending import Settled
from mailfathom.app.confirmation.ports import Confirmation
from mailfathom.app.sending import response_derivation as derive
from mailfathom.app.sending import rules as sending_rules
from mailfathom.app.sending.answered_email import AnsweredEmails, forwarded_files
from mailfathom.app.sending.confirmable import Outgoing
from mailfathom.app.sending.ports import AuthoredMessage
from mailfathom.app.sending.submission import Submission
from mailfathom.app.shared.authorization import Permissions
from mailfathom.app.shared.files import AttachmentReader
from mailfathom.domain import recipient_policy
from mailfathom.domain.access import Caller, Permission
from mailfathom.domain.drafts import Answering
from mailfathom.domain.outgoing import AddressField, OutgoingKind, OutgoingRecord

# A forward carries the message it forwards, and no permission implies another.
PERMISSIONS: Permissions = frozenset({Permission.SEND, Permission.MAIL_READ})


@dataclass(frozen=True, slots=True)
class ForwardRequest:
    stored_email_id: object
    to: Iterable[object] | None
    plain_text_body: object
    idempotency_key: object
    cc: Iterable[object] | None = None
    bcc: Iterable[object] | None = None
    html_body: object = None
    language: object = None


class EmailForward:
    def __init__(
        self, submission: Submission, answered: AnsweredEmails, attachments: AttachmentReader
    ) -> None:
        self._submission = submission
        self._answered = answered
        self._attachments = attachments

    def forward(self, caller: Caller, request: ForwardRequest) -> OutgoingRecord:
        """Write the send of a caller whose entry asks nobody first."""
        return self._submission.unconfirmed(caller, self._prepare(caller, request))

    def settle(
        self, caller: Caller, request: ForwardRequest, confirmation: Confirmation
    ) -> Settled[OutgoingRecord]:
        return self._submission.settle(
            caller, confirmation, request.language, lambda: self._prepare(caller, request)
        )

    def _prepare(self, caller: Caller, request: ForwardRequest) -> Outgoing:
        config = self._submission.config
        answer = self._answered.begin(
            caller, PERMISSIONS, config, request.stored_email_id, request.idempotency_key
        )
        bounds, original, sender = config.mail_delivery, answer.original, answer.sender
        recipients = sending_rules.recipients(
            request.to, request.cc, request.bcc, bounds.max_recipient_count
        )
        text = sending_rules.bodies(
            request.plain_text_body, request.html_body, bounds.max_body_characters
        )
        addresses = [r.address for r in recipients]
        recipient_policy.admit(bounds.recipient_policy, addresses)
        recipient_policy.vouch(config, addresses, self._submission.recipients)
        files = forwarded_files(original, bounds, self._attachments)
        message = AuthoredMessage(
            from_address=sender.address,
            from_name=sender.delivery.display_name,
            to=tuple(r.address for r in recipients if r.field is AddressField.TO),
            cc=tuple(r.address for r in recipients if r.field is AddressField.CC),
            subject=derive.forward_subject(original.row.summary.subject),
            plain_text=derive.forward_text(text.plain, original.row, bounds.max_body_characters),
            html=text.html,
            attachments=files,
        )
        return Outgoing(
            OutgoingKind.FORWARD,
            answer.account_id,
            answer.key,
            message,
            tuple(recipients),
            answering=Answering.FORWARD,
            answered_email_id=original.row.summary.stored_email_id,
        )
