"""The published shape of a get_email_content result. As in `models`, a property with a
`default` is always present in structuredContent and left out of the text while it holds
that value."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from mailfathom.entrypoints.mcp.models import (
    MachineAuthorshipModel,
    Published,
    RemoteFlagsModel,
    SenderVerificationModel,
)


class TextModel(Published):
    text: str = Field(description="The text as returned, possibly cut.")
    originalCharacterCount: int = Field(description="How long the whole text is.")
    truncatedBy: Literal[
        "none", "bodyCharacterLimit", "readCharacterBudget", "sensitiveContentScanCeiling"
    ] = Field(
        default="none",
        description="Which bound cut the text, or none. sensitiveContentScanCeiling: the "
        "deployment scans mail for sensitive content and the rest of this body lies past what "
        "one scan reads, so it is withheld; no call returns more of it.",
    )


class BodyModel(Published):
    availability: Literal[
        "readable",
        "encryptedNotReadableLocally",
        "notStoredExceededSizeLimit",
        "notStoredAwaitingStorageHeadroom",
    ] = Field(
        default="readable",
        description="Whether the text is the message, and if not, why it is empty.",
    )
    plainText: TextModel = Field(description="The plain-text body.")
    sanitizedHtml: TextModel | None = Field(
        default=None,
        description="The HTML body with everything active or remote removed; null unless "
        "asked for and present.",
    )


class AttachmentModel(Published):
    partId: str | None = Field(
        default=None,
        description="Which part of the email this file is: what savePart names to save it.",
    )
    fileName: str | None = Field(
        default=None,
        description="The normalized file name; null when nothing usable was written.",
    )
    wasFileNameNormalized: bool = Field(
        default=False, description="Whether the written name was rewritten."
    )
    mediaType: str = Field(description="The declared media type.")
    sizeBytes: int = Field(description="The decoded size in bytes.")
    downloadState: Literal["notRequested", "unavailable"] = Field(
        default="notRequested",
        description="notRequested unless links were asked for; unavailable where this "
        "deployment cannot issue them.",
    )


class AttachmentCountsModel(Published):
    attachmentCount: int = Field(description="Files attached by the author.")
    inlineResourceCount: int = Field(description="Resources the body displays in place.")


class ParticipantModel(Published):
    role: Literal["from", "sender", "reply-to", "to", "cc", "bcc"] = Field(
        description="The header the participant was named in."
    )
    address: str = Field(description="The address as written.")
    displayName: str | None = Field(
        default=None, description="The display name, if one was written."
    )


class SenderAuthenticationModel(Published):
    authenticatedDomain: str | None = Field(
        default=None,
        description="The domain that authenticated, upper-cased ASCII; null if none did.",
    )
    displayedAuthorDomain: str | None = Field(
        default=None,
        description="The From domain, upper-cased ASCII; null without a usable From.",
    )
    authenticatedBy: Literal["dkim", "spf", "none"] = Field(
        default="none", description="The check that established authenticatedDomain."
    )
    dmarc: str = Field(
        default="notReported",
        description="The DMARC result the trusted server reported; notReported where it "
        "reported none.",
    )
    verdictSource: Literal["receivingServer", "localVerification"] = Field(
        default="receivingServer", description="Which reading produced this evidence."
    )


class HeadersModel(Published):
    subject: str | None = Field(default=None, description="The decoded subject.")
    sentAt: datetime | None = Field(default=None, description="The Date header, UTC.")
    receivedAt: datetime | None = Field(
        default=None, description="When the server received it, UTC."
    )
    participants: list[ParticipantModel] = Field(
        default=[], description="Everyone named, with roles."
    )
    messageId: str | None = Field(default=None, description="The Message-ID.")
    inReplyTo: list[str] = Field(default=[], description="The In-Reply-To identifiers.")
    references: list[str] = Field(default=[], description="The References identifiers.")
    senderAuthentication: SenderAuthenticationModel = Field(
        default=SenderAuthenticationModel(),
        description="The evidence the sender verdict was reached from.",
    )


class AuthorshipEvidenceModel(Published):
    signals: list[str] = Field(default=[], description="Signals the text carried, strongest first.")
    profileRevision: str | None = Field(
        default=None,
        description="The weighting the likelihood was computed under; null if not assessed.",
    )


class ThreadMessageModel(Published):
    storedEmailId: str = Field(description="The other message's identifier.")
    position: int | None = Field(default=None, description="Its place in the conversation's order.")
    inReplyToStoredEmailId: str | None = Field(
        default=None,
        description="The message it answers, or null when it is a root of what is shown.",
    )
    subject: str | None = Field(default=None, description="Its subject.")
    sentAt: datetime | None = Field(default=None, description="Its Date header, UTC.")
    senderAddress: str | None = Field(default=None, description="Its From address.")


class ThreadModel(Published):
    threadId: str = Field(description="Pass back as threadId to read the conversation.")
    position: int | None = Field(
        default=None,
        description="This email's zero-based place in the conversation's order.",
    )
    inReplyToStoredEmailId: str | None = Field(
        default=None,
        description="The message this one answers, or null when it is a root of what is shown.",
    )
    messageCount: int = Field(description="How many of the conversation's messages are visible.")
    otherMessages: list[ThreadMessageModel] = Field(
        default=[], description="The other visible messages, named but not reproduced, in order."
    )
    moreMessagesNotNamed: bool = Field(
        default=False,
        description="Whether otherMessages stopped short; read the thread by threadId then.",
    )


class EmailContentModel(Published):
    accountId: str = Field(description="The account holding the email.")
    folderAlias: str = Field(description="The folder holding it.")
    sizeBytes: int = Field(description="The size of the whole email as the server reported it.")
    senderVerification: SenderVerificationModel = Field(
        default=SenderVerificationModel(), description="The sender verdict pair."
    )
    machineAuthorship: MachineAuthorshipModel = Field(
        default=MachineAuthorshipModel(), description="The authorship reading."
    )
    authorshipEvidence: AuthorshipEvidenceModel = Field(
        default=AuthorshipEvidenceModel(),
        description="What the authorship reading was computed from.",
    )
    headers: HeadersModel = Field(description="Normalized headers and sender evidence.")
    body: BodyModel = Field(description="The body representations, or why there are none.")
    attachments: list[AttachmentModel] = Field(
        default=[], description="One entry per attachment; empty when the email carries none."
    )
    attachmentCounts: AttachmentCountsModel | None = Field(
        default=None,
        description="Counts of attachments and inline resources; null when never read.",
    )
    remoteFlags: RemoteFlagsModel = Field(
        default=RemoteFlagsModel(), description="The flags a server last showed."
    )
    thread: ThreadModel | None = Field(
        default=None,
        description="The conversation this email belongs to; null when none is assembled.",
    )


class FailureModel(Published):
    code: int = Field(description="The stable five-digit code, as a failed call reports it.")
    message: str = Field(description="Why this email has no content.")


class EmailEntryModel(Published):
    storedEmailId: str = Field(description="The email this entry answers for.")
    content: EmailContentModel | None = Field(
        default=None, description="The email as read, or null."
    )
    failure: FailureModel | None = Field(
        default=None, description="Why there is no content, or null."
    )


class SavedFileModel(Published):
    path: str = Field(description="The path of the file written.")
    mediaType: str = Field(description="The attachment's declared media type.")
    sizeBytes: int = Field(description="The bytes written.")


class GetEmailContentResult(Published):
    emails: list[EmailEntryModel] = Field(
        default=[],
        description="One entry per named email in the order named, or per conversation "
        "message served in the conversation's order.",
    )
    unreadThreadMessages: list[str] = Field(
        default=[],
        description="The conversation's messages this call did not carry; pass them as "
        "storedEmailIds to read them. Empty when emails were named.",
    )


# The result of the form offered to a caller that may save an attachment to a file.
class GetEmailContentSavingResult(GetEmailContentResult):
    savedFile: SavedFileModel | None = Field(
        default=None, description="The file savePart and saveTo wrote, or null."
    )
