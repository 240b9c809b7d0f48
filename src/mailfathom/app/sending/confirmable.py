"""A message a sending use case settled, as the confirmation step sees it: what is written
down when it is sent, and what a person is shown of it before."""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass

from mailfathom.app.confirmation.question import ShownFile, ShownMessage
from mailfathom.app.sending.ports import AuthoredMessage
from mailfathom.domain.drafts import Answering
from mailfathom.domain.outgoing import AddressField, OutgoingKind, Recipient


@dataclass(frozen=True, slots=True)
class Outgoing:
    """A message every bound has been checked for, with its key and envelope. An answer
    names the email it answers and how (`answering`, `answered_email_id`); `derived` are the
    recipients it reaches because the answered email named them, not because the caller
    wrote them."""

    kind: OutgoingKind
    account_id: str
    key: str
    message: AuthoredMessage
    recipients: tuple[Recipient, ...]
    answering: Answering | None = None
    answered_email_id: uuid.UUID | None = None
    derived: frozenset[str] = frozenset()


def shown(outgoing: Outgoing) -> ShownMessage:
    message = outgoing.message
    sender = (
        f"{message.from_name} <{message.from_address}>"
        if message.from_name
        else message.from_address
    )
    files = tuple(
        ShownFile(a.file_name or a.media_type, len(a.content)) for a in message.attachments
    )
    # Sent without being shown: the threading fields, and each file's type and octets.
    unshown = (
        message.in_reply_to or "",
        *message.references,
        *(
            f"{a.media_type};{a.parameters!r};{hashlib.sha256(a.content).hexdigest()}"
            for a in message.attachments
        ),
    )
    return ShownMessage(
        account_id=outgoing.account_id,
        sender=sender,
        to=message.to,
        cc=message.cc,
        bcc=tuple(r.address for r in outgoing.recipients if r.field is AddressField.BCC),
        subject=message.subject,
        files=files,
        body=message.plain_text,
        html=message.html,
        envelope=tuple(f"{r.field.value}:{r.address}" for r in outgoing.recipients),
        unshown=unshown,
    )
