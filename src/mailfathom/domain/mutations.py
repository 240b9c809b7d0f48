"""Durable mutation records: a change a caller asked of the owner's own mailbox.

A record is written when the change is asked for and carried by the account's own
synchronization run to one of two endings: completed, or dead-lettered with a failure code.
The record names the stored email, the kind of change and its value; nothing else about the
message. Its identity is the email, the kind, who asked and the request identity, so a
retried request finds the record its first attempt wrote. A folder a caller asked to create
is a record of its own kind, with the same states and failure codes, in the same identifier
space.
"""

from __future__ import annotations

import enum
import uuid
from dataclasses import dataclass
from datetime import datetime


class MutationKind(enum.Enum):
    """What a record changes, under the names log lines, counters and results use."""

    SET_SEEN = "set-seen"
    SET_FLAGGED = "set-flagged"
    ADD_KEYWORDS = "add-keywords"
    REMOVE_KEYWORDS = "remove-keywords"
    SET_KEYWORDS = "set-keywords"
    # The message leaves its folder for another one of the same account; the value is the
    # destination's folder identifier.
    MOVE = "move"


KEYWORD_KINDS = frozenset(
    {MutationKind.ADD_KEYWORDS, MutationKind.REMOVE_KEYWORDS, MutationKind.SET_KEYWORDS}
)


class MutationState(enum.Enum):
    PENDING = "pending"
    CONVERGING = "converging"
    COMPLETED = "completed"
    DEAD_LETTERED = "dead-lettered"


OPEN_STATES = frozenset({MutationState.PENDING, MutationState.CONVERGING})


class MutationFailure(enum.IntEnum):
    """Why a record was dead-lettered; a record keeps the code, never a server's text."""

    MESSAGE_GONE = 1
    KEYWORD_NOT_PERMANENT = 2
    CHANGED_ON_SERVER = 3
    ATTEMPTS_SPENT = 4
    FOLDER_GONE = 5
    # The server offers neither MOVE (RFC 6851) nor UIDPLUS (RFC 4315): a move could only end
    # in a bare EXPUNGE, which would remove whatever else is marked \\Deleted, so nothing is
    # done.
    MOVE_NOT_OFFERED = 6
    # The copy could not be found in the destination (no COPYUID, and no Message-ID to look
    # it up by), so the original was left where it is.
    MOVE_NOT_CONFIRMED = 7
    # Folders of that name and of each of its numbered names are already on the server: none
    # is taken over, since it may be one the deployment withholds from tools or does not map.
    FOLDER_EXISTS = 8
    # The server refused to create the folder, or the name holds the server's hierarchy
    # delimiter (it would name a folder under another one).
    FOLDER_NAME_REFUSED = 9


# The codes a folder creation record is dead-lettered with.
CREATION_FAILURES = (
    MutationFailure.ATTEMPTS_SPENT,
    MutationFailure.FOLDER_GONE,
    MutationFailure.FOLDER_EXISTS,
    MutationFailure.FOLDER_NAME_REFUSED,
)

MAX_ATTEMPTS = 5


def boolean_value(value: bool) -> str:
    return "true" if value else "false"


def keyword_value(keywords: frozenset[str]) -> str:
    """Keywords in their one stored spelling: sorted and space-separated (an IMAP atom holds
    no space)."""
    return " ".join(sorted(keywords))


def keywords_of(value: str) -> frozenset[str]:
    return frozenset(value.split())


@dataclass(frozen=True, slots=True)
class RequestedMutation:
    """One value a call asked for."""

    kind: MutationKind
    value: str


@dataclass(frozen=True, slots=True)
class MutationRecord:
    record_id: uuid.UUID
    kind: MutationKind
    account_id: str
    stored_email_id: uuid.UUID
    folder_id: int
    value: str
    requester: str
    request_id: str
    state: MutationState
    attempts: int
    last_error_code: int | None
    created_at: datetime
    updated_at: datetime
    # The digest of the whole request that wrote the record (`mutation_requests`); None on
    # a record written before requests were kept whole.
    request_digest: str | None = None


# The name a folder creation record's change goes by beside `MutationKind`'s.
CREATE_FOLDER = "create-folder"


@dataclass(frozen=True, slots=True)
class FolderCreationRecord:
    """A folder creation record as the operator sees it: the alias the new folder is
    published under (its parent's alias, a slash and its name under a parent), the parent
    folder, who asked, and where the record stands."""

    record_id: uuid.UUID
    account_id: str
    alias: str
    # None for a folder at the top level.
    parent_folder_id: int | None
    requester: str
    state: MutationState
    attempts: int
    last_error_code: int | None
    created_at: datetime
    updated_at: datetime
