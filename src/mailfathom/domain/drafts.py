"""Drafts: messages the owner writes and nobody receives until one is sent.

A draft is held here under an identifier of this deployment's (`draft_id`), stable across
edits; each accepted edit is a new revision carrying the whole composed message. A copy of the
current revision stands in the folder the account maps to the drafts role when that could be
appended; the draft is `held` until it is, `filed` once it is.
"""

from __future__ import annotations

import enum
import unicodedata
import uuid
from dataclasses import dataclass
from datetime import datetime

from mailfathom.domain.outgoing import AddressField


class Answering(enum.Enum):
    """What a draft answering a stored email does with it."""

    SENDER_ONLY = "senderOnly"
    EVERYONE = "everyone"
    FORWARD = "forward"

    @classmethod
    def parse(cls, value: object) -> Answering | None:
        return next((a for a in cls if a.value == value), None)


class DraftLife(enum.Enum):
    LIVE = "live"
    DELETED = "deleted"
    SENT = "sent"


class CopyState(enum.Enum):
    """Whether the owner's drafts folder shows the current revision yet."""

    HELD = "held"
    FILED = "filed"


class DeleteOutcome(enum.Enum):
    """What became of the mailbox copies of a draft given up: all taken out (`deleted`), one
    left in a folder nothing here will touch again (`copyLeftBehind`), or the mailbox could
    not be reached and a later pass takes them out (`pending`)."""

    DELETED = "deleted"
    COPY_LEFT_BEHIND = "copyLeftBehind"
    PENDING = "pending"


@dataclass(frozen=True, slots=True)
class CopyPlace:
    """Where one copy was put: the folder's name on the server, its UIDVALIDITY and the
    copy's UID (RFC 4315 APPENDUID; a local folder assigns both the same way)."""

    folder: str
    uidvalidity: int
    uid: int


@dataclass(frozen=True, slots=True)
class DraftCopy:
    revision: int
    place: CopyPlace


@dataclass(frozen=True, slots=True)
class AppendMark:
    """Where a copy about to be appended will land: the folder, its UIDVALIDITY, and the
    UIDNEXT it announced just before (RFC 3501 section 2.3.1.1: a message appended later gets
    a UID no lower), so a copy whose APPEND answer was lost is looked for from there on."""

    folder: str
    uidvalidity: int
    since_uid: int


@dataclass(frozen=True, slots=True)
class PendingAppend:
    """The copy of `revision` was sent to the server at `mark`, and where it stands was not
    recorded: the answer was lost, or the process ended, before it came."""

    revision: int
    mark: AppendMark


@dataclass(frozen=True, slots=True)
class DraftRecipient:
    """Somebody a draft is addressed to. `written` is False for whoever an answer reaches by
    derivation from the answered email, which vouches for them."""

    field: AddressField
    address: str
    written: bool = True


@dataclass(frozen=True, slots=True)
class DraftFile:
    """A file a draft's message carries, as the draft's question lists it: its display name
    (None when it has none) and its size in octets, before any transfer encoding."""

    file_name: str | None
    size_octets: int


# The revision a draft is written at; every accepted edit counts one more.
FIRST_REVISION = 1


@dataclass(frozen=True, slots=True)
class Draft:
    draft_id: uuid.UUID
    account_id: str
    caller: str
    answering: Answering | None
    answered_email_id: uuid.UUID | None
    revision: int
    message_id: str
    mime: bytes
    body_characters: int
    recipients: tuple[DraftRecipient, ...]
    saved_at: datetime
    life: DraftLife
    copies: tuple[DraftCopy, ...] = ()
    outgoing_id: uuid.UUID | None = None
    files: tuple[DraftFile, ...] = ()
    pending_append: PendingAppend | None = None

    @property
    def copy_state(self) -> CopyState:
        filed = any(c.revision == self.revision for c in self.copies)
        return CopyState.FILED if filed else CopyState.HELD

    @property
    def edited(self) -> bool:
        """Whether an edit replaced the message the draft was saved with."""
        return self.revision != FIRST_REVISION

    @property
    def superseded(self) -> tuple[DraftCopy, ...]:
        return tuple(c for c in self.copies if c.revision != self.revision)


def normalized_body(text: str) -> str:
    """A body as the retry key reads it, so that a retry whose text went through another
    transport's line handling is still the same draft: Unicode NFC; CRLF and lone CR become
    LF; spaces and tabs at the end of each line are dropped; blank lines at the start and the
    end are dropped. Everything else (words, inner blank lines, indentation) counts."""
    unified = unicodedata.normalize("NFC", text).replace("\r\n", "\n").replace("\r", "\n")
    lines = [line.rstrip(" \t") for line in unified.split("\n")]
    return "\n".join(lines).strip("\n")
