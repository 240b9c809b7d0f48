"""Values that cross the synchronization ports."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from mailfathom.domain.authorship import AuthorshipReading
from mailfathom.domain.content_state import ContentState, RemoteFlags
from mailfathom.domain.message import NormalizedMessage
from mailfathom.domain.pickling import pickled_by_fields
from mailfathom.domain.sender_verdict import SenderVerdict


@dataclass(frozen=True, slots=True)
class FolderStatus:
    """What selecting a folder reported (RFC 3501 section 6.3.1, RFC 7162 section 3.1.2.1)."""

    uidvalidity: int
    uid_next: int | None
    exists: int
    highest_modseq: int | None


@dataclass(frozen=True, slots=True)
class EnvelopeItem:
    """What a cheap per-message fetch reports before any body is read: enough to decide
    whether to fetch the body. Flags and dates are read with the body itself."""

    uid: int
    size_octets: int


@dataclass(frozen=True, slots=True)
class FetchedMessage:
    """One message as fetched: its raw MIME, or only its header block when `headers_only`."""

    uid: int
    size_octets: int
    flags: RemoteFlags
    modseq: int | None
    received_at: datetime | None
    raw: bytes
    headers_only: bool = False


@dataclass(frozen=True, slots=True)
class FlagChange:
    uid: int
    flags: RemoteFlags
    modseq: int | None


@dataclass(frozen=True, slots=True)
class ChangeSet:
    """Changes since a known mod-sequence: flags that moved and UIDs that vanished."""

    changed: tuple[FlagChange, ...]
    vanished: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class NewMessage:
    """A message ready to be written: the fetch, its normalization and where its MIME went."""

    uid: int
    size_octets: int
    flags: RemoteFlags
    modseq: int | None
    received_at: datetime | None
    normalized: NormalizedMessage
    content_state: ContentState
    content_key: str | None
    # See `PreparedMessage.stored_text`.
    stored_text: bytes | None = None
    # What the wired trust ports answered (None: no port was asked; see `trust_ports`).
    verdict: SenderVerdict | None = None
    authorship: AuthorshipReading | None = None


@dataclass(frozen=True, slots=True)
class FolderRecord:
    """What the store knows about one mapped folder."""

    folder_id: int
    account_id: str
    remote_name: str
    alias: str
    role: str | None
    visible_to_tools: bool
    uidvalidity: int | None
    highest_modseq: int | None
    uid_next: int | None
    last_committed_at: datetime | None
    push_supported: bool | None


@dataclass(frozen=True, slots=True)
class SyncReport:
    """What one folder pass did; counts only, no content."""

    folder_alias: str
    fetched_bodies: int = 0
    stored: int = 0
    flags_updated: int = 0
    removed: int = 0
    rekeyed: int = 0
    deferred_for_headroom: int = 0
    oversized: int = 0
    uidvalidity_reset: bool = False
    contacts_collected: int = 0


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class PreparedMessage:
    """A fetched message made ready to store: its content key (None when only the header
    block was fetched) and what normalization read from it.

    `stored_text`: when the content store holds the message's text (plain and HTML body)
    beside its MIME, the plain body in UTF-8, for the lexical index; the database then keeps
    no copy of either body, and `normalized` carries neither (its plain text is empty, its
    HTML None). Encoded text crosses from the workers as it was written, and is indexed as
    it is, never decoded and encoded again on the way."""

    content_key: str | None
    normalized: NormalizedMessage
    stored_text: bytes | None = None
