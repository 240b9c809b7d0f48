"""send_email: write a new message and its outgoing record down; transmit nothing.

The delivery pass offers the message to a server afterwards. What this call answers is the
record: queued for a new send, or whatever the first call with the same idempotency key led
to for a repeated one. A caller whose entry asks a person first goes through the confirmation
step (`settle`), which may end in a draft or in nothing written.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from mailfathom.app.confirmation.confirmed_sending import Settled
from mailfathom.app.confirmation.ports import Confirmation
from mailfathom.app.sending import rules as sending_rules
from mailfathom.app.sending.confirmable import Outgoing
from mailfathom.app.sending.ports import AuthoredMessage
from mailfathom.app.sending.submission import Submission
from mailfathom.app.shared.authorization import Permissions, require
from mailfathom.app.shared.mailbox_selection import ServedAccount
from mailfathom.domain import recipient_policy
from mailfathom.domain.access import Caller, Permission
from mailfathom.domain.outgoing import AddressField, OutgoingKind, OutgoingRecord

PERMISSIONS: Permissions = frozenset({Permission.SEND})


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
    language: object = None


class AuthoredMailSubmission:
    def __init__(self, submission: Submission, served: Sequence[ServedAccount]) -> None:
        self._submission = submission
        self._served = tuple(served)

    def send(self, caller: Caller, request: SendRequest) -> OutgoingRecord:
        """Write the send of a caller whose entry asks nobody first."""
        return self._submission.unconfirmed(caller, self._prepare(caller, request))

    def settle(
        self, caller: Caller, request: SendRequest, confirmation: Confirmation
    ) -> Settled[OutgoingRecord]:
        return self._submission.settle(
            caller, confirmation, request.language, lambda: self._prepare(caller, request)
        )

    def _prepare(self, caller: Caller, request: SendRequest) -> Outgoing:
        require(caller, PERMISSIONS)
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
        recipient_policy.admit(bounds.recipient_policy, addresses)
        recipient_policy.vouch(config, addresses, self._submission.recipients)
        message = AuthoredMessage(
            from_address=sender.address,
            from_name=sender.delivery.display_name,
            to=tuple(r.address for r in recipients if r.field is AddressField.TO),
            cc=tuple(r.address for r in recipients if r.field is AddressField.CC),
            subject=title,
            plain_text=text.plain,
            html=text.html,
        )
        return Outgoing(OutgoingKind.NEW, served.account_id, key, message, tuple(recipients))
