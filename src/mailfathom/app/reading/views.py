"""What the reading use cases answer with: summaries, content, conversations, matches.

These are the use cases' projections; an entrypoint publishes them under its own names and
enumerations. The sender verdict and the authorship reading are what synchronization stored;
a reading this deployment does not make (download links) is reported as not established
rather than invented.
"""

from __future__ import annotations

import enum
import uuid
from dataclasses import dataclass
from datetime import datetime

from mailfathom.domain.authorship import AuthorshipState
from mailfathom.domain.embedding import RetrievalMode, SemanticState
from mailfathom.domain.sender_verdict import AuthorAuthentication, DeploymentTrust


class ContentAvailability(enum.Enum):
    AVAILABLE = "available"
    EXCEEDED_SIZE_LIMIT = "exceededSizeLimit"
    AWAITING_STORAGE_HEADROOM = "awaitingStorageHeadroom"


@dataclass(frozen=True, slots=True)
class FolderFreshness:
    account_id: str
    alias: str
    last_committed_at: datetime | None

    @property
    def was_synchronized(self) -> bool:
        return self.last_committed_at is not None


@dataclass(frozen=True, slots=True)
class SenderVerification:
    author_authentication: AuthorAuthentication = AuthorAuthentication.NOT_ESTABLISHED
    deployment_trust: DeploymentTrust = DeploymentTrust.UNKNOWN


@dataclass(frozen=True, slots=True)
class MachineAuthorship:
    state: AuthorshipState = AuthorshipState.NOT_ASSESSED
    likelihood: float = 0.0


@dataclass(frozen=True, slots=True)
class AttachmentSummary:
    attachment_count: int | None
    inline_resource_count: int | None
    total_size_octets: int | None
    is_encrypted: bool
    has_unverified_signature: bool
    has_unexpanded_tnef: bool


@dataclass(frozen=True, slots=True)
class FlagsView:
    seen: bool
    flagged: bool
    answered: bool
    draft: bool
    deleted: bool
    keywords: tuple[str, ...]
    observed_at: datetime | None

    @property
    def was_observed(self) -> bool:
        return self.observed_at is not None


@dataclass(frozen=True, slots=True)
class EmailSummary:
    stored_email_id: uuid.UUID
    account_id: str
    account_display_name: str
    folder_alias: str
    message_id: str | None
    thread_id: uuid.UUID | None
    subject: str | None
    sender_address: str | None
    sender_display_name: str | None
    sender_verification: SenderVerification
    machine_authorship: MachineAuthorship
    to_addresses: tuple[str, ...]
    sent_at: datetime | None
    received_at: datetime | None
    size_octets: int
    attachments: AttachmentSummary
    flags: FlagsView
    content_availability: ContentAvailability
    # The other folders of the request's scope holding this same message, which this entry
    # stands for (a message is listed once across folders).
    also_in_folders: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class BodyScanReport:
    """How many bodies a `contains` page read, and whether its bound ended the page early."""

    bodies_examined: int
    cut: bool


@dataclass(frozen=True, slots=True)
class TimelinePage:
    emails: tuple[EmailSummary, ...]
    next_cursor: str | None
    included_junk_mail: bool
    folder_freshness: tuple[FolderFreshness, ...]
    # Present when the listing carried `contains`.
    contains_scan: BodyScanReport | None = None


# -- content -------------------------------------------------------------------------------


class BodyAvailability(enum.Enum):
    READABLE = "readable"
    ENCRYPTED_NOT_READABLE_LOCALLY = "encryptedNotReadableLocally"
    NOT_STORED_EXCEEDED_SIZE_LIMIT = "notStoredExceededSizeLimit"
    NOT_STORED_AWAITING_STORAGE_HEADROOM = "notStoredAwaitingStorageHeadroom"


class TruncatedBy(enum.Enum):
    NONE = "none"
    BODY_CHARACTER_LIMIT = "bodyCharacterLimit"
    READ_CHARACTER_BUDGET = "readCharacterBudget"
    SENSITIVE_CONTENT_SCAN_CEILING = "sensitiveContentScanCeiling"


class DownloadState(enum.Enum):
    NOT_REQUESTED = "notRequested"
    UNAVAILABLE = "unavailable"
    ISSUED = "issued"


@dataclass(frozen=True, slots=True)
class TextRepresentation:
    text: str
    original_character_count: int
    truncated_by: TruncatedBy


@dataclass(frozen=True, slots=True)
class BodyView:
    availability: BodyAvailability
    plain_text: TextRepresentation
    sanitized_html: TextRepresentation | None


@dataclass(frozen=True, slots=True)
class AttachmentView:
    file_name: str | None
    was_file_name_normalized: bool
    media_type: str
    size_octets: int
    download_state: DownloadState
    # Where the part sits in the email (IMAP body-section numbers): how a save names it.
    part_id: str | None = None
    # Both present exactly when `download_state` is ISSUED. The address is a bearer
    # capability: it is returned to the caller and written nowhere else.
    download_url: str | None = None
    download_expires_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class AttachmentCounts:
    attachment_count: int
    inline_resource_count: int


@dataclass(frozen=True, slots=True)
class ParticipantView:
    role: str
    address: str
    display_name: str | None


@dataclass(frozen=True, slots=True)
class SenderAuthentication:
    """The evidence behind a verdict, as synchronization stored it. `verification_state`
    says whether the message was verified at all: mail stored before anything verified it
    carries the empty evidence of `NOT_YET_VERIFIED`."""

    authenticated_domain: str | None
    displayed_author_domain: str | None
    authenticated_by: str = "none"
    dmarc: str = "notReported"
    verdict_source: str = "receivingServer"
    verification_state: str = "notYetVerified"


@dataclass(frozen=True, slots=True)
class AuthorshipEvidence:
    """The signals the text carried, strongest first, and the weighting's revision; empty
    and None on a message nothing assessed."""

    signals: tuple[str, ...] = ()
    profile_revision: str | None = None


@dataclass(frozen=True, slots=True)
class HeadersView:
    subject: str | None
    sent_at: datetime | None
    received_at: datetime | None
    participants: tuple[ParticipantView, ...]
    message_id: str | None
    in_reply_to: tuple[str, ...]
    references: tuple[str, ...]
    sender_authentication: SenderAuthentication


@dataclass(frozen=True, slots=True)
class ThreadMessageRef:
    stored_email_id: uuid.UUID
    position: int | None
    in_reply_to_stored_email_id: uuid.UUID | None
    subject: str | None
    sent_at: datetime | None
    sender_address: str | None


@dataclass(frozen=True, slots=True)
class ThreadBlock:
    thread_id: uuid.UUID
    position: int | None
    in_reply_to_stored_email_id: uuid.UUID | None
    message_count: int
    other_messages: tuple[ThreadMessageRef, ...]
    more_messages_not_named: bool


@dataclass(frozen=True, slots=True)
class EmailContent:
    account_id: str
    folder_alias: str
    size_octets: int
    sender_verification: SenderVerification
    machine_authorship: MachineAuthorship
    headers: HeadersView
    body: BodyView
    attachments: tuple[AttachmentView, ...]
    attachment_counts: AttachmentCounts | None
    flags: FlagsView
    thread: ThreadBlock | None
    authorship_evidence: AuthorshipEvidence = AuthorshipEvidence()


@dataclass(frozen=True, slots=True)
class EntryFailure:
    code: int
    message: str


@dataclass(frozen=True, slots=True)
class EmailEntry:
    stored_email_id: uuid.UUID
    content: EmailContent | None
    failure: EntryFailure | None


@dataclass(frozen=True, slots=True)
class SavedFile:
    """An attachment saved to a file: the path written, the part's media type, its size."""

    path: str
    media_type: str
    size_octets: int


@dataclass(frozen=True, slots=True)
class ContentRead:
    emails: tuple[EmailEntry, ...]
    unread_thread_messages: tuple[uuid.UUID, ...]
    saved: SavedFile | None = None


# -- search --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SearchMatch:
    summary: EmailSummary
    relevance_rank: float
    snippets: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PatternScan:
    """How far a pattern's scan got: candidates examined, and whether a ceiling stopped it
    with candidates left unexamined."""

    candidates_scanned: int
    cut: bool


@dataclass(frozen=True, slots=True)
class SearchResult:
    matches: tuple[SearchMatch, ...]
    retrieval_mode: RetrievalMode
    semantic_search: SemanticState
    included_junk_mail: bool
    folder_freshness: tuple[FolderFreshness, ...]
    # Present when the search carried a pattern.
    pattern_scan: PatternScan | None = None
