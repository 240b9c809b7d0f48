"""The published shapes of list_accounts, list_emails and search_emails results.

Property names are the wire names (camel case) and every property carries a description, so
the output schema a client reads is the documentation. Enumerations are this boundary's own
literal types rather than the use cases' enums: a rename inside the application must not
change the protocol silently.

structuredContent always carries every property, and the output schema requires them all.
A property that has a `default` in the schema is one the compact text of a result leaves out
while it holds that value (see `result_text`): the defaults are the values that say nothing
happened (null, false, an empty list) and the verdicts an unremarkable email carries.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from mailfathom.entrypoints.mcp.untrusted import (
    CONTENT_TRUST_NOTICE,
    OwnText,
    mail_content,
    mail_content_paths,
)

ContentAvailabilityName = Literal["available", "exceededSizeLimit", "awaitingStorageHeadroom"]
AuthorAuthenticationName = Literal["authenticated", "failed", "notEstablished"]
DeploymentTrustName = Literal["trusted", "unknown"]
AuthorshipStateName = Literal["likely", "possible", "unlikely", "notAssessed"]
SynchronizationModeName = Literal["polling", "push"]


def _every_property_required(schema: dict[str, Any]) -> None:
    """A default is what the text leaves out, not what structuredContent may: every
    property stays required of the structured result."""
    properties = schema.get("properties")
    if properties:
        schema["required"] = list(properties)


class Published(BaseModel):
    model_config = ConfigDict(
        frozen=True, extra="forbid", json_schema_extra=_every_property_required
    )


class ContentTrustModel(Published):
    notice: OwnText = Field(description="This server's sentence on the fields listed below.")
    untrustedFields: list[OwnText] = Field(
        description="Every field of this result that can carry text taken from mail, as a "
        "path: properties joined by '.', '[]' after a list."
    )


def _trust_is_always_written(schema: dict[str, Any]) -> None:
    """The constructor's placeholder default is not published: contentTrust is always there."""
    _every_property_required(schema)
    schema.get("properties", {}).get("contentTrust", {}).pop("default", None)


class CarriesMailContent(Published):
    """A result that can carry mail text. Its contentTrust is written here from the model's
    own marks, whatever a constructor was handed, so only this server ever fills it."""

    model_config = ConfigDict(
        frozen=True, extra="forbid", json_schema_extra=_trust_is_always_written
    )

    # None only so that a constructor need not pass it: `_notice` always writes it.
    contentTrust: ContentTrustModel = Field(  # type: ignore[assignment]
        default=None,
        description="This server's notice that the fields it lists hold untrusted mail "
        "content; no field outside that list does.",
    )

    @model_validator(mode="before")
    @classmethod
    def _notice(cls, data: Any) -> Any:
        if isinstance(data, dict):
            trust = ContentTrustModel(
                notice=CONTENT_TRUST_NOTICE, untrustedFields=list(mail_content_paths(cls))
            )
            return {**data, "contentTrust": trust}
        return data


class FolderFreshnessModel(Published):
    accountId: OwnText = Field(description="The account the folder belongs to.")
    alias: OwnText = Field(description="The folder's MailFathom alias.")
    lastCommittedAt: datetime | None = Field(
        default=None,
        description="When synchronization last committed progress for this folder; null if "
        "it never has.",
    )
    wasSynchronized: bool = Field(
        default=False,
        description="Whether any synchronization run has ever committed progress for it.",
    )


class FolderEntryModel(Published):
    alias: OwnText = Field(description="The folder's MailFathom alias, usable in a folders filter.")
    lastCommittedAt: datetime | None = Field(
        default=None,
        description="When synchronization last committed progress for it; null if never.",
    )
    wasSynchronized: bool = Field(
        default=False, description="Whether any run has ever committed progress."
    )


class AccountModel(Published):
    accountId: OwnText = Field(description="The configured identifier, stable across renames.")
    displayName: OwnText = Field(description="The readable name the operator gave the account.")
    synchronizationMode: SynchronizationModeName = Field(
        description="What the operator asked synchronization of this account to use."
    )
    folders: list[FolderEntryModel] = Field(
        default=[],
        description="Every folder tools may read, with how current its local copy is. Empty "
        "means synchronization has not reached any such folder yet.",
    )


class ListAccountsResult(Published):
    accounts: list[AccountModel] = Field(
        default=[],
        description="The accounts this deployment serves, ordered by account identifier.",
    )
    synchronizationEnabled: bool = Field(
        description="Whether the deployment is refreshing its local copy at all; false means "
        "the freshness timestamps will not advance."
    )


class SenderVerificationModel(Published):
    authorAuthentication: AuthorAuthenticationName = Field(
        default="notEstablished",
        description="What was established about the author the email displays.",
    )
    deploymentTrust: DeploymentTrustName = Field(
        default="unknown",
        description="Whether this deployment's trusted-sender configuration names that author.",
    )


class MachineAuthorshipModel(Published):
    state: AuthorshipStateName = Field(
        default="notAssessed",
        description="How much the email's text reads as machine written. Informational, not "
        "a safety signal; notAssessed where nothing was assessed.",
    )
    likelihood: float = Field(
        default=0.0,
        ge=0.0,
        le=1.0,
        description="The heuristic estimate behind state, 0 to 1. 0 on notAssessed, where it "
        "means nothing: read state first.",
    )

    @model_validator(mode="after")
    def _no_estimate_beside_no_assessment(self) -> MachineAuthorshipModel:
        if self.state == "notAssessed" and self.likelihood != 0.0:
            raise ValueError("nothing assessed carries a likelihood of 0")
        return self


class AttachmentSummaryModel(Published):
    attachmentCount: int | None = Field(
        default=None,
        description="Files attached by the author; null when the parts were never read.",
    )
    inlineResourceCount: int | None = Field(
        default=None,
        description="Resources the body displays in place (logos, pictures in a signature); "
        "null when the parts were never read.",
    )
    totalSizeBytes: int | None = Field(
        default=None,
        description="Decoded size of all non-body parts in bytes; null when never read.",
    )
    isEncrypted: bool = Field(default=False, description="Whether the email is encrypted.")
    hasUnverifiedSignature: bool = Field(
        default=False,
        description="Whether the email carries a signature nothing here verified.",
    )
    hasUnexpandedTnef: bool = Field(
        default=False,
        description="Whether the email carries a TNEF (winmail.dat) part left unexpanded.",
    )


class RemoteFlagsModel(Published):
    seen: bool = Field(default=False, description="The remote \\Seen flag as last observed.")
    flagged: bool = Field(
        default=False, description="The remote \\Flagged flag (a mail client's star)."
    )
    answered: bool = Field(default=False, description="The remote \\Answered flag.")
    draft: bool = Field(default=False, description="The remote \\Draft flag.")
    deleted: bool = Field(default=False, description="The remote \\Deleted flag.")
    keywords: list[OwnText] = Field(
        default=[], description="Keywords on the email, lower-cased and sorted."
    )
    observedAt: datetime | None = Field(
        default=None, description="When a synchronization run last read these flags."
    )
    wasObserved: bool = Field(
        default=False,
        description="Whether any run has read them; false means every flag above is unknown, "
        "not unset.",
    )


class EmailSummaryModel(Published):
    storedEmailId: OwnText = Field(description="The stable local identifier content reads take.")
    accountId: OwnText = Field(description="The account holding the email.")
    accountDisplayName: OwnText = Field(description="The display name of that account.")
    folderAlias: OwnText = Field(description="The alias of the folder holding the email.")
    messageId: str | None = mail_content(
        default=None, description="The Message-ID header, if the email has one."
    )
    threadId: OwnText | None = Field(
        default=None,
        description="The conversation the email belongs to; null until one is assembled.",
    )
    subject: str | None = mail_content(default=None, description="The subject, as decoded.")
    senderAddress: str | None = mail_content(
        default=None, description="The From address as the email claims it; not verified."
    )
    senderDisplayName: str | None = mail_content(
        default=None, description="The From display name, if any."
    )
    senderVerification: SenderVerificationModel = Field(
        default=SenderVerificationModel(),
        description="The sender verdict pair; read both values together.",
    )
    machineAuthorship: MachineAuthorshipModel = Field(
        default=MachineAuthorshipModel(),
        description="The machine-authorship reading of the email's text.",
    )
    toAddresses: list[str] = mail_content(
        default=[], description="The To addresses; Cc is not listed here."
    )
    sentAt: datetime | None = Field(default=None, description="The Date header, in UTC.")
    receivedAt: datetime | None = Field(
        default=None, description="When the mail server received it, UTC."
    )
    sizeBytes: int = Field(description="The size of the whole email as the server reported it.")
    attachments: AttachmentSummaryModel = Field(
        default=AttachmentSummaryModel(), description="What the email carries besides text."
    )
    remoteFlags: RemoteFlagsModel = Field(
        default=RemoteFlagsModel(), description="The flags a server last showed."
    )
    contentAvailability: ContentAvailabilityName = Field(
        default="available",
        description="Whether the raw content is held locally, and if not, why.",
    )
    alsoInFolders: list[OwnText] = Field(
        default=[],
        description="The aliases of the other folders of this request's scope holding this "
        "same message (a label's copy on Gmail), whether or not their copies pass the "
        "filters: it is listed once, from the first of its folders whose copy passes them, "
        "and this entry stands for those copies too. Empty when there are none.",
    )


class ContainsScanModel(Published):
    bodiesExamined: int = Field(description="Bodies read to fill this page.")
    cut: bool = Field(
        description="true when the bound on bodies read per page ended it early; nextCursor "
        "then continues after the last body read."
    )


class ListEmailsResult(CarriesMailContent):
    emails: list[EmailSummaryModel] = Field(
        default=[], description="The page, in the requested direction."
    )
    nextCursor: OwnText | None = Field(
        default=None,
        description="Pass back as cursor, with the same filters and direction, for the next "
        "page; null on the last page.",
    )
    includedJunkMail: bool = Field(default=False, description="Whether a junk folder took part.")
    folderFreshness: list[FolderFreshnessModel] = Field(
        default=[], description="How current the local copy of each folder read is."
    )
    containsScan: ContainsScanModel | None = Field(
        default=None, description="How far a contains filter read; null without one."
    )


class SearchMatchModel(Published):
    summary: EmailSummaryModel = Field(description="The matched email, as a listing shows it.")
    relevanceRank: float = Field(
        description="Higher is more relevant; comparable only within this response. A word "
        "found in at least half of the indexed mail carries no weight, so a query made only "
        "of such words ranks every match 0 and the newest come first."
    )
    snippets: list[str] = mail_content(
        default=[],
        description="Bounded extracts of the body with matched words wrapped in **.",
    )


class PatternScanModel(Published):
    candidatesScanned: int = Field(description="Emails the pattern was tried on.")
    cut: bool = Field(
        description="true when a ceiling (emails examined, or time) stopped the scan with "
        "emails left untried: a narrower search may find more."
    )


class SearchEmailsResult(CarriesMailContent):
    matches: list[SearchMatchModel] = Field(
        default=[], description="Matches, most relevant first, ties broken by newest received."
    )
    retrievalMode: Literal["lexical", "hybrid"] = Field(
        description="How this call ranked its results."
    )
    semanticSearch: Literal["inactive", "available", "degraded"] = Field(
        description="What this server can do with embeddings right now."
    )
    includedJunkMail: bool = Field(default=False, description="Whether a junk folder took part.")
    folderFreshness: list[FolderFreshnessModel] = Field(
        default=[], description="How current the local copy of each folder searched is."
    )
    patternScan: PatternScanModel | None = Field(
        default=None, description="How far a matchPattern scan got; null without one."
    )
