"""The ports mail flag changes are written against: the durable record store, and the
command a synchronization run issues to carry a record to the mailbox."""

from __future__ import annotations

import uuid
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from mailfathom.domain.content_state import RemoteFlags
from mailfathom.domain.mutations import (
    FolderCreationRecord,
    MutationKind,
    MutationRecord,
    MutationState,
    RequestedMutation,
)


@dataclass(frozen=True, slots=True)
class MutationTarget:
    """A stored email a change may be recorded against: one with a remote occurrence in a
    folder the request may read."""

    stored_email_id: uuid.UUID
    account_id: str
    folder_id: int
    folder_alias: str


class RequestIdentityTaken(Exception):
    """The request identity was already used on one of the emails for another request."""


class MutationStore(Protocol):
    def target(
        self, stored_email_id: uuid.UUID, folder_ids: Sequence[int]
    ) -> MutationTarget | None:
        """The email when it lies in `folder_ids` and its row still names a message of the
        folder's current UIDVALIDITY; None otherwise."""
        ...

    def record(
        self,
        target: MutationTarget,
        requester: str,
        request_id: str,
        asked: Sequence[RequestedMutation],
        now: datetime,
    ) -> list[MutationRecord]:
        """One record per value, in the order asked, all in one commit. Records this same
        request (the same values of the same email) already wrote under the requester and
        request identity are answered as they stand; records another request wrote under
        them on this email, whatever their values, raise `RequestIdentityTaken` and nothing
        is written (`domain/mutation_requests.py`). A new record's value is shown on the
        local copy in the same commit."""
        ...


@dataclass(frozen=True, slots=True)
class OpenMutation:
    """A record the synchronization run still has to carry, with where its message is."""

    record_id: uuid.UUID
    kind: MutationKind
    value: str
    folder_id: int
    remote_name: str
    # None when the message's row is gone or names an older UIDVALIDITY.
    uid: int | None
    modseq: int | None
    attempts: int


class MutationLedger(Protocol):
    """The record store as a synchronization run sees it."""

    def open_mutations(self, account_id: str) -> list[OpenMutation]:
        """Pending and converging records of the account, oldest first."""
        ...

    def open_mark(self, account_id: str) -> tuple[int, int]:
        """(How many records of the account are open, the highest sequence among them): one
        cheap read that changes whenever any process records a change or revives one."""
        ...

    def begin(self, record_ids: Sequence[uuid.UUID], now: datetime) -> None:
        """Mark the records converging and count one more attempt."""
        ...

    def settle(
        self,
        record_ids: Sequence[uuid.UUID],
        state: MutationState,
        error_code: int | None,
        now: datetime,
    ) -> None: ...

    def advance(self, folder_id: int, modseqs: Mapping[int, int]) -> None:
        """The local copy knows these messages as of these mod-sequences (UID to value), which
        this run's own commands left; a lower one is raised, a higher one kept."""
        ...


@dataclass(frozen=True, slots=True)
class StoreOutcome:
    """What the server answered one flag command with, per UID."""

    # UIDs the server changed (or already held as asked).
    applied: frozenset[int]
    # UIDs refused because the message changed after `unchanged_since` (RFC 7162 MODIFIED).
    modified: frozenset[int]
    # The mod-sequence the command left per UID, where the server keeps them.
    left: Mapping[int, int] = field(default_factory=dict)


class FlagWriter(Protocol):
    """The flag command of a session with the folder `remote_name` opened for writing."""

    def holds_folder(self, remote_name: str) -> bool:
        """Whether the mailbox lists a folder of this name."""
        ...

    def permanent_keywords(self, remote_name: str) -> tuple[bool, frozenset[str]]:
        """(whether new keywords may be created, the keywords kept permanently), lower case,
        from the folder's PERMANENTFLAGS."""
        ...

    def store_flags(
        self,
        remote_name: str,
        uids: Sequence[int],
        operation: str,
        flags: Sequence[str],
        observed: Mapping[int, int] | None,
    ) -> StoreOutcome:
        """Add ("+") or remove ("-") `flags` (as IMAP writes them) on `uids`. `observed` is
        the mod-sequence the local copy last saw per UID: where the server keeps them, a
        message changed after that (by anybody but this writer) is left alone and reported
        in `modified`. A UID the folder no longer holds is in neither set."""
        ...

    def current_keywords(self, remote_name: str, uids: Sequence[int]) -> dict[int, frozenset[str]]:
        """The keywords each message carries now; a UID the folder no longer holds is
        absent."""
        ...

    def current_flags(self, remote_name: str, uids: Sequence[int]) -> dict[int, RemoteFlags]:
        """The flags and keywords each message carries now; a UID the folder no longer holds
        is absent."""
        ...


class MutationRecords(Protocol):
    """The record store as the operator sees it (`mfctl mutations`)."""

    def listing(
        self, limit: int | None, states: Sequence[MutationState], account_id: str | None
    ) -> list[MutationRecord]:
        """The newest records first, of these states (and this account when given);
        every one with `limit` None."""
        ...

    def find(self, record_id: uuid.UUID) -> MutationRecord | None: ...

    def revive(self, record_id: uuid.UUID, now: datetime) -> MutationRecord | None:
        """A dead-lettered record back to pending with no attempt counted and no failure
        code, its value shown on the local copy again, in one commit; any other record is
        left as it is. Answers the record as it then stands (None when none is held)."""
        ...

    def folder_aliases(self, folder_ids: Collection[int]) -> dict[int, str]:
        """The published alias of each folder still held (a folder gone is absent)."""
        ...


class AliasClaimed(Exception):
    """The alias of a folder creation record is carried by a folder or claimed by another
    record of the account meanwhile."""


class FolderCreationRecords(Protocol):
    """Folder creation records as the operator sees them (`mfctl mutations`)."""

    def listing(
        self, limit: int | None, states: Sequence[MutationState], account_id: str | None
    ) -> list[FolderCreationRecord]:
        """The newest records first, of these states (and this account when given);
        every one with `limit` None."""
        ...

    def find(self, record_id: uuid.UUID) -> FolderCreationRecord | None: ...

    def revive(self, record_id: uuid.UUID, now: datetime) -> FolderCreationRecord | None:
        """A dead-lettered record back to pending with no attempt counted and no failure
        code, keeping the server name it noted, in one commit; any other record is left as
        it is. Raises `AliasClaimed`, leaving the record as it is, when a folder of the
        account visible to tools carries its alias, or another pending, converging or
        completed record claims it (compared without regard to case), as a call asking for
        the folder now would be refused. Answers the record as it then stands (None when
        none is held)."""
        ...
