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
        """One record of `asked` per target, in the order given, all in one commit. A target
        already holding a record of the same kind under this requester and request identity
        is answered with that record as it stands; one holding it with a different value
        raises `RequestIdentityTaken` and nothing is written. A keyword change is shown on
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
