"""The published shape of a get_email_content result. As in `models`, a property with a
`default` is always present in structuredContent and left out of the text while it holds
that value."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from mailfathom.entrypoints.mcp.models import (
    CarriesMailContent,
    MachineAuthorshipModel,
    Published,
    RemoteFlagsModel,
    SenderVerificationModel,
)
from mailfathom.entrypoints.mcp.untrusted import OwnText, mail_content


class TextModel(Published):
    text: str = mail_content(description="The text as returned, possibly cut.")
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
    partId: OwnText | None = Field(
        default=None,
        description="Which part of the email this file is: what savePart names to save it.",
    )
    fileName: str | None = mail_content(
        default=None,
        description="The normalized file name; null when nothing usable was written.",
    )
    wasFileNameNormalized: bool = Field(
        default=False, description="Whether the written name was rewritten."
    )
    mediaType: str = mail_content(description="The declared media type.")
    sizeBytes: int = Field(description="The decoded size in bytes.")
    downloadState: Literal["notRequested", "unavailable", "issued"] = Field(
        default="notRequested",
        description="notRequested unless links were asked for; unavailable where this "
        "deployment cannot issue them; issued when downloadUrl carries one.",
    )
    downloadUrl: OwnText | None = Field(
        default=None,
        description="Only when issued: an absolute address returning this one file to a "
        "plain GET with no credential, until downloadExpiresAt. A bearer secret: fetch it "
        "once, never log or keep it.",
    )
    downloadExpiresAt: datetime | None = Field(
        default=None,
        description="Only when issued: when downloadUrl stops working (UTC); read the "
        "email again for a new one.",
    )


class AttachmentCountsModel(Published):
    attachmentCount: int = Field(description="Files attached by the author.")
    inlineResourceCount: int = Field(description="Resources the body displays in place.")


class ParticipantModel(Published):
    role: Literal["from", "sender", "reply-to", "to", "cc", "bcc"] = Field(
        description="The header the participant was named in."
    )
    address: str = mail_content(description="The address as written.")
    displayName: str | None = mail_content(
        default=None, description="The display name, if one was written."
    )


class SenderAuthenticationModel(Published):
    authenticatedDomain: str | None = mail_content(
        default=None,
        description="The domain that authenticated, upper-cased ASCII; null if none did.",
    )
    displayedAuthorDomain: str | None = mail_content(
        default=None,
        description="The From domain, upper-cased ASCII; null without a usable From.",
    )
    authenticatedBy: Literal["dkim", "spf", "none"] = Field(
        default="none", description="The check that established authenticatedDomain."
    )
    dmarc: OwnText = Field(
        default="notReported",
        description="The DMARC result the trusted server reported; notReported where it "
        "reported none.",
    )
    verdictSource: Literal["receivingServer", "localVerification"] = Field(
        default="receivingServer", description="Which reading produced this evidence."
    )
    verificationState: Literal["verified", "notYetVerified"] = Field(
        default="verified",
        description="notYetVerified: stored before this deployment verified anything, so "
        "nothing is established until mfctl mailbox reverify reaches it.",
    )


class HeadersModel(Published):
    subject: str | None = mail_content(default=None, description="The decoded subject.")
    sentAt: datetime | None = Field(default=None, description="The Date header, UTC.")
    receivedAt: datetime | None = Field(
        default=None, description="When the server received it, UTC."
    )
    participants: list[ParticipantModel] = Field(
        default=[], description="Everyone named, with roles."
    )
    messageId: str | None = mail_content(default=None, description="The Message-ID.")
    inReplyTo: list[str] = mail_content(default=[], description="The In-Reply-To identifiers.")
    references: list[str] = mail_content(default=[], description="The References identifiers.")
    senderAuthentication: SenderAuthenticationModel = Field(
        default=SenderAuthenticationModel(),
        description="The evidence the sender verdict was reached from.",
    )


AuthorshipSignalName = Literal[
    "tagCharacters",
    "variationSelectorRun",
    "hiddenCharacters",
    "bidirectionalOverrides",
    "formulaicFraming",
    "unspacedEmDashes",
    "listScaffolding",
    "uniformTypography",
]


class AuthorshipEvidenceModel(Published):
    signals: list[AuthorshipSignalName] = Field(
        default=[],
        description="The signals the text carried, strongest first: the first four are facts "
        "about its characters, the last four observations about style. No position, count or "
        "text. Empty when nothing assessed it.",
    )
    profileRevision: OwnText | None = Field(
        default=None,
        description="The weighting the likelihood was computed under; null if not assessed.",
    )


class ThreadMessageModel(Published):
    storedEmailId: OwnText = Field(description="The other message's identifier.")
    position: int | None = Field(default=None, description="Its place in the conversation's order.")
    inReplyToStoredEmailId: OwnText | None = Field(
        default=None,
        description="The message it answers, or null when it is a root of what is shown.",
    )
    subject: str | None = mail_content(default=None, description="Its subject.")
    sentAt: datetime | None = Field(default=None, description="Its Date header, UTC.")
    senderAddress: str | None = mail_content(default=None, description="Its From address.")


class ThreadModel(Published):
    threadId: OwnText = Field(description="Pass back as threadId to read the conversation.")
    position: int | None = Field(
        default=None,
        description="This email's zero-based place in the conversation's order.",
    )
    inReplyToStoredEmailId: OwnText | None = Field(
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
    accountId: OwnText = Field(description="The account holding the email.")
    folderAlias: OwnText = Field(description="The folder holding it.")
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
    message: OwnText = Field(description="Why this email has no content.")


class EmailEntryModel(Published):
    storedEmailId: OwnText = Field(description="The email this entry answers for.")
    content: EmailContentModel | None = Field(
        default=None, description="The email as read, or null."
    )
    failure: FailureModel | None = Field(
        default=None, description="Why there is no content, or null."
    )


class SavedFileModel(Published):
    path: OwnText = Field(description="The path of the file written.")
    mediaType: str = mail_content(description="The attachment's declared media type.")
    sizeBytes: int = Field(description="The bytes written.")


class GetEmailContentResult(CarriesMailContent):
    emails: list[EmailEntryModel] = Field(
        default=[],
        description="One entry per named email in the order named, or per conversation "
        "message served in the conversation's order.",
    )
    unreadThreadMessages: list[OwnText] = Field(
        default=[],
        description="The conversation's messages this call did not carry; pass them as "
        "storedEmailIds to read them. Empty when emails were named.",
    )


# The result of the form offered to a caller that may save an attachment to a file.
class GetEmailContentSavingResult(GetEmailContentResult):
    savedFile: SavedFileModel | None = Field(
        default=None, description="The file savePart and saveTo wrote, or null."
    )
