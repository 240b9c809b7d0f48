"""Values the read side of the store hands to the reading use cases.

These are rows as the store holds them, already limited to the folders a request may read;
the use cases turn them into what a caller is shown. Nothing here carries raw MIME.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime

from mailfathom.domain.authorship import NOT_ASSESSED, AuthorshipReading
from mailfathom.domain.content_state import ContentState
from mailfathom.domain.folders import FolderRole
from mailfathom.domain.sender_verdict import NOT_YET_VERIFIED, SenderVerdict


@dataclass(frozen=True, slots=True)
class FolderView:
    """A folder the deployment lets tools read."""

    folder_id: int
    account_id: str
    alias: str
    role: FolderRole | None
    last_committed_at: datetime | None


@dataclass(frozen=True, slots=True)
class SummaryFilter:
    """What a listing or a search is limited to, in the store's own terms.

    `folder_ids` is never empty: the use case resolves the scope first and answers an empty
    scope itself. Addresses and the keyword arrive lower-cased; the subject fragment is
    matched case-insensitively as literal text (wildcard characters match themselves)."""

    folder_ids: tuple[int, ...]
    sender_address: str | None = None
    recipient_address: str | None = None
    subject_fragment: str | None = None
    received_on_or_after: datetime | None = None
    received_before: datetime | None = None
    # The Date header's instant; a message without one passes neither bound.
    sent_on_or_after: datetime | None = None
    sent_before: datetime | None = None
    seen: bool | None = None
    flagged: bool | None = None
    keyword: str | None = None
    has_attachments: bool | None = None
    # Words the lexical index must hold for the message (all of them), as a body-text
    # filter narrows its candidates: a superset of the mail whose body carries them.
    indexed_words: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class TimelinePosition:
    """Where a page of the timeline ended: the last row's received time and sequence.

    The timeline is ordered by received time, then by `seq`, both in the reading direction;
    a row whose received time is unknown sorts as the oldest."""

    received_at: datetime | None
    seq: int


@dataclass(frozen=True, slots=True)
class StoredFlags:
    seen: bool
    flagged: bool
    answered: bool
    draft: bool
    deleted: bool
    keywords: tuple[str, ...]
    observed_at: datetime | None


@dataclass(frozen=True, slots=True)
class SummaryRow:
    seq: int
    stored_email_id: uuid.UUID
    account_id: str
    folder_id: int
    folder_alias: str
    message_id: str | None
    thread_id: uuid.UUID | None
    subject: str | None
    sender_address: str | None
    sender_name: str | None
    to_addresses: tuple[str, ...]
    sent_at: datetime | None
    received_at: datetime | None
    size_octets: int
    attachment_count: int | None
    inline_count: int | None
    attachment_octets: int | None
    is_encrypted: bool
    has_unverified_signature: bool
    has_unexpanded_tnef: bool
    flags: StoredFlags
    content_state: ContentState
    # What synchronization stored about the sender and the text (never evaluated on read).
    verdict: SenderVerdict = NOT_YET_VERIFIED
    authorship: AuthorshipReading = NOT_ASSESSED
    # In a listing or a search: the aliases of the other folders of the request's scope that
    # hold a copy of this message, which this row stands for (see `MailboxReadView`).
    other_folder_aliases: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ParticipantRow:
    role: str
    address: str
    display_name: str | None


@dataclass(frozen=True, slots=True)
class PartRow:
    kind: str
    file_name: str | None
    name_was_normalized: bool
    media_type: str
    size_octets: int
    # Where the part sits in the MIME tree, numbered as IMAP numbers body sections.
    part_path: str | None = None


@dataclass(frozen=True, slots=True)
class EmailRow:
    """Everything a content read publishes about one stored email."""

    summary: SummaryRow
    participants: tuple[ParticipantRow, ...]
    in_reply_to: tuple[str, ...]
    references: tuple[str, ...]
    plain_text: str | None
    html: str | None
    parts: tuple[PartRow, ...]
    content_key: str | None
    # The body should be readable from the content store and is not (missing or damaged).
    text_missing: bool = False


@dataclass(frozen=True, slots=True)
class ThreadMember:
    """One message of a conversation, as far as the caller may see it."""

    seq: int
    stored_email_id: uuid.UUID
    parent_seq: int | None
    position: int | None
    subject: str | None
    sent_at: datetime | None
    sender_address: str | None
    # The `seq` of the copies of this message in later folders of the scope, which this
    # member stands for.
    copies: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class SearchRow:
    summary: SummaryRow
    rank: float
    body: str = field(default="", repr=False)
