"""The ports organizing is written against: the durable record store of the flag changes,
asked for many emails at once, and the moves' convergence: the ledger and the commands."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from mailfathom.app.flags.ports import MutationTarget
from mailfathom.domain.mutations import MutationRecord, MutationState, RequestedMutation


class OrganizeStore(Protocol):
    def targets(
        self, stored_email_ids: Sequence[uuid.UUID], folder_ids: Sequence[int]
    ) -> dict[uuid.UUID, MutationTarget]:
        """The emails that lie in `folder_ids` with a row naming a message of the folder's
        current UIDVALIDITY; an email answering neither is absent."""
        ...

    def record_each(
        self,
        targets: Sequence[MutationTarget],
        requester: str,
        request_id: str,
        asked: RequestedMutation,
        now: datetime,
    ) -> list[MutationRecord]:
        """One record of `asked` per target, in the order given, all in one commit. Records
        this same request (the same value of the same emails, in any order) already wrote
        under this requester and request identity are answered as they stand; records
        another request wrote under them on one of these emails raise `RequestIdentityTaken`
        and nothing is written (`domain/mutation_requests.py`). A keyword change is shown on
        the local copy in the same commit; a move is shown once it has happened."""
        ...


@dataclass(frozen=True, slots=True)
class OpenMove:
    """A move record the synchronization run still has to carry, with where its message is
    now and what an interrupted earlier attempt noted."""

    record_id: uuid.UUID
    stored_email_id: uuid.UUID
    source_folder_id: int
    source_remote: str
    destination_folder_id: int
    # None when the destination is no folder of the account any more.
    destination_remote: str | None
    # Where the stored row is now: its folder, and its UIDVALIDITY and UID when they are the
    # folder's current ones (None when the row is gone or names an older UIDVALIDITY).
    row_folder_id: int | None
    row_uidvalidity: int | None
    row_uid: int | None
    message_id: str | None
    # Noted before the COPY or MOVE was issued: the message's place in the source, and the
    # destination's UIDVALIDITY and UIDNEXT, so a retry looks for a copy only among the UIDs
    # the destination gave out since.
    noted_source: tuple[int, int] | None
    noted_destination: tuple[int, int] | None
    attempts: int


class MoveLedger(Protocol):
    """The record store as the moves' convergence sees it. Every method is one commit."""

    def open_moves(self, account_id: str) -> list[OpenMove]:
        """Pending and converging move records of the account, oldest first."""
        ...

    def begin(self, record_ids: Sequence[uuid.UUID], now: datetime) -> None: ...

    def settle(
        self,
        record_ids: Sequence[uuid.UUID],
        state: MutationState,
        error_code: int | None,
        now: datetime,
    ) -> None: ...

    def note(
        self,
        sources: Mapping[uuid.UUID, tuple[int, int]],
        destination: tuple[int, int],
        now: datetime,
    ) -> None:
        """Keep, per record, (UIDVALIDITY, UID) of the message in the source, and the
        destination's (UIDVALIDITY, UIDNEXT), before the command that moves it is issued."""
        ...

    def repoint(self, placed: Mapping[uuid.UUID, int], folder_id: int, uidvalidity: int) -> None:
        """The stored rows of these emails now name these UIDs of the destination folder:
        each keeps its identifier, conversation and content. A row a synchronization pass of
        the destination stored meanwhile for the same message is removed first."""
        ...

    def resource(self, sources: Mapping[uuid.UUID, int], now: datetime) -> None:
        """These records, not yet begun, now move their emails from these folders: an earlier
        move of the same email took it there after the record was written."""
        ...

    def forget(self, stored_email_ids: Sequence[uuid.UUID]) -> None:
        """Remove the stored rows of messages a move found gone from the server."""
        ...


class MoveWriter(Protocol):
    """The commands that move messages, over a synchronization run's own session. Raises
    `SyncError` for a failure worth another attempt."""

    def can_move(self) -> bool:
        """Whether messages can be moved without a bare EXPUNGE: MOVE, or UIDPLUS."""
        ...

    def destination(self, remote_name: str) -> tuple[int, int]:
        """(UIDVALIDITY, UIDNEXT) of the folder."""
        ...

    def holds_folder(self, remote_name: str) -> bool:
        """Whether the mailbox lists a folder of this name."""
        ...

    def present(self, remote_name: str, uids: Sequence[int], uidvalidity: int) -> set[int]:
        """Open the folder for writing; the UIDs of `uids` it still holds, none when its
        UIDVALIDITY is no longer `uidvalidity` (the UIDs then name other messages)."""
        ...

    def transfer(self, source: str, uids: Sequence[int], destination: str) -> dict[int, int]:
        """Move (or copy) these UIDs of `source`, opened by `present`, into `destination`:
        answers source UID to destination UID, as the server named them (COPYUID)."""
        ...

    def find(self, destination: str, since_uid: int, message_id: str) -> int | None:
        """The lowest UID from `since_uid` on in `destination` whose Message-ID is this."""
        ...

    def remove_originals(self, source: str, uids: Sequence[int]) -> None:
        """Take out exactly these UIDs of `source` once their copies are confirmed (STORE
        \\Deleted and UID EXPUNGE of them alone); nothing to do where MOVE moved them."""
        ...


@dataclass(frozen=True, slots=True)
class FolderCreation:
    """A folder a caller asked to create, as its record stands."""

    creation_id: uuid.UUID
    account_id: str
    name: str
    alias: str
    parent_folder_id: int | None
    state: MutationState
    last_error_code: int | None
    # The folder row once the folder exists on the server and is published.
    folder_id: int | None


class FolderCreationRequested(Exception):
    """The request identity was already used on the account for another folder."""


class FolderCreations(Protocol):
    """Durable records of folders to create. Every method is one commit."""

    def request(
        self,
        account_id: str,
        name: str,
        alias: str,
        parent_folder_id: int | None,
        requester: str,
        request_id: str,
        now: datetime,
    ) -> FolderCreation:
        """A pending record of this folder; a record already held under this requester and
        request identity is answered as it stands when it asks for the same folder, and
        raises `FolderCreationRequested` when it asks for another."""
        ...

    def held(self, account_id: str, requester: str, request_id: str) -> FolderCreation | None:
        """The record written under this requester and request identity, if any."""
        ...

    def alias_claimed(self, account_id: str, alias: str) -> bool:
        """Whether a pending, converging or completed record of the account publishes a
        folder under this alias (compared without regard to case)."""
        ...


@dataclass(frozen=True, slots=True)
class OpenCreation:
    creation_id: uuid.UUID
    name: str
    alias: str
    # The server name of the parent folder; None for a folder at the top level, and None
    # with `parent_gone` when the parent is no folder of the account any more.
    parent_remote: str | None
    parent_gone: bool
    noted_remote_name: str | None
    attempts: int


class CreationLedger(Protocol):
    """Folder creation records as the synchronization run carries them. One commit each."""

    def open_creations(self, account_id: str) -> list[OpenCreation]: ...

    def open_count(self, account_id: str) -> int: ...

    def begin(self, creation_id: uuid.UUID, remote_name: str, now: datetime) -> None:
        """Converging, one more attempt, and the server name about to be created noted."""
        ...

    def created(self, creation_id: uuid.UUID, remote_name: str, now: datetime) -> int:
        """The folder exists on the server: its folder row (published under the record's
        alias, visible to tools, no role) is written and the record completed, together.
        Answers the folder row's id."""
        ...

    def settle(
        self, creation_id: uuid.UUID, state: MutationState, error_code: int | None, now: datetime
    ) -> None: ...


class FolderWriter(Protocol):
    """Folder commands over a synchronization run's own session. Raises `SyncError` for a
    failure worth another attempt, `FolderRefused` when the server will not create it."""

    def delimiter(self) -> str | None:
        """The character the server separates folder levels with (None: a flat namespace)."""
        ...

    def exists(self, remote_name: str) -> bool: ...

    def create(self, remote_name: str) -> None:
        """Create the folder and subscribe to it (RFC 3501 sections 6.3.3 and 6.3.6)."""
        ...


class FolderRefused(Exception):
    """The server answered NO to the CREATE."""
