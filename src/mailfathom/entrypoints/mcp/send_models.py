"""Published shapes of the sending tools. Nothing about a message appears in them: no
subject, no body, no Message-ID, no folder; recipients only as the caller wrote them. As in
`models`, a property with a `default` is left out of the text while it holds that value."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from mailfathom.entrypoints.mcp.models import CarriesMailContent, Published
from mailfathom.entrypoints.mcp.untrusted import OwnText, mail_content

# Why a send was kept as a draft when nobody chose it.
ReasonName = Literal["confirmation_unavailable", "sensitive_content"]
OutgoingState = Literal["queued", "sending", "sent", "refused", "cancelled"]
STATE_DESCRIPTION = (
    "queued: waiting for the delivery pass; sending: an attempt holds it; sent: a server "
    "accepted it; refused: it was given up on (failureCode says why); cancelled: withdrawn."
)


class SendResult(Published):
    outgoingEmailId: OwnText | None = Field(
        default=None,
        description="The send's identifier, for get_outgoing_email and cancel_outgoing_email; "
        "null when nothing was queued (status draft or cancelled).",
    )
    accountId: OwnText = Field(description="The account the message is sent as.")
    state: OutgoingState | None = Field(
        default=None,
        description="queued for a new send; a repeated call (same idempotencyKey) answers "
        "the first call's record as it stands now; null when nothing was queued. "
        + STATE_DESCRIPTION,
    )
    recipientCount: int | None = Field(
        default=None,
        description="How many addresses the message is offered to across to, cc and bcc, "
        "each address once; null when nothing was queued.",
    )
    queuedAt: datetime | None = Field(
        default=None,
        description="When the send was first written down (for a repeated call: when the "
        "first call wrote it); null when nothing was queued.",
    )
    sendAfter: datetime | None = Field(
        default=None,
        description="The instant (UTC) before which the delivery pass does not offer the "
        "message, as send_draft was asked; null when none was asked or nothing was queued.",
    )
    status: Literal["queued", "draft", "cancelled"] = Field(
        description="queued: written down for the delivery pass (state says how far it got; "
        "a repeated call answers the first call's send as it stands, withdrawn included, "
        "and nobody is asked again). draft: kept as a draft and not sent (the person asked "
        "chose it, or nobody could be asked: see reason). cancelled: nothing was written and "
        "nothing is sent (the person asked chose Cancel, or the owner deleted the draft an "
        "earlier call with this key was kept as)."
    )
    sent: bool = Field(
        description="true only once a mail server accepted the message (state sent); a "
        "queued message has not been sent yet, and a draft or a cancelled one never is."
    )
    draftId: OwnText | None = Field(
        default=None, description="The draft's identifier when status is draft; else null."
    )
    reason: ReasonName | None = Field(
        default=None,
        description="confirmation_unavailable: this caller's sends wait for a person's yes "
        "and the client could not ask one, so the message was kept as a draft and the owner "
        "alerted. sensitive_content: the message carries sensitive content (a card number, "
        "an IBAN, an identifier, a credential or a one-time code) and the deployment keeps "
        "such mail as a draft, with the owner alerted, rather than sending it unasked. Null "
        "otherwise.",
    )


class OutgoingRecipientModel(Published):
    address: str = mail_content(
        description="The address as the send named it (for an answer, possibly as the "
        "answered email gave it)."
    )
    field: Literal["to", "cc", "bcc"] = Field(description="The header that names it.")
    state: Literal["pending", "accepted", "refused"] = Field(
        description="What a mail server has made of this address so far."
    )
    lastReplyCode: int | None = Field(
        default=None,
        description="The SMTP reply code a server last gave about this address; null until "
        "one did.",
    )


class OutgoingStatusResult(CarriesMailContent):
    outgoingEmailId: OwnText = Field(description="The send's identifier.")
    accountId: OwnText = Field(description="The account the message is sent as.")
    state: OutgoingState = Field(description=STATE_DESCRIPTION)
    attemptCount: int = Field(
        description="Delivery attempts made, counted as each begins (one under way counts)."
    )
    queuedAt: datetime = Field(description="When the send was first written down.")
    sendAfter: datetime | None = Field(
        default=None,
        description="The instant (UTC) before which the delivery pass does not offer the "
        "message; null when the send was not asked to wait.",
    )
    recipients: list[OutgoingRecipientModel] = Field(
        default=[], description="Everybody the message is addressed to, in header order."
    )
    failureCode: int | None = Field(
        default=None,
        description="The five-digit code the last failed attempt recorded; null while none "
        "failed. It may be present on a send that later succeeded.",
    )
