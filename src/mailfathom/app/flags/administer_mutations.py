"""The operator's hold on mutation records (`mfctl mutations`): list them, read one, send a
dead-lettered one back to the synchronization run. It answers with what a record holds about
the change (its kind, state, attempts and failure code, and the aliases of the folders a
move leaves and goes to or a new folder is published under: configuration, not content),
never the keywords it names.

Folder creation records are held beside the other changes, in the same identifier space: a
dead-lettered one is sent back only while its alias is still free, as a call asking for the
folder now would need it to be; one another record or a served folder took meanwhile stays
dead-lettered, so no two folders are published under one alias."""

from __future__ import annotations

import enum
import heapq
import itertools
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import structlog

from mailfathom.app.flags.ports import AliasClaimed, FolderCreationRecords, MutationRecords
from mailfathom.domain.mutations import (
    CREATE_FOLDER,
    FolderCreationRecord,
    MutationKind,
    MutationRecord,
    MutationState,
)

log = structlog.get_logger("mailfathom.flags")

# What `listing` shows when no state is named: everything not yet completed.
UNFINISHED = (MutationState.PENDING, MutationState.CONVERGING, MutationState.DEAD_LETTERED)

AnyRecord = MutationRecord | FolderCreationRecord


class Retried(enum.Enum):
    NOW = "now"
    # Pending, converging or completed: a retry changes nothing.
    NOT_DEAD_LETTERED = "not-dead-lettered"
    # A folder creation whose alias a served folder carries or another record claims now:
    # it stays dead-lettered.
    ALIAS_CLAIMED = "alias-claimed"


@dataclass(frozen=True, slots=True)
class Retry:
    record: AnyRecord
    outcome: Retried


class MutationAdministration:
    def __init__(
        self,
        records: MutationRecords,
        creations: FolderCreationRecords,
        wake: Callable[[str], None] = lambda account_id: None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._records = records
        self._creations = creations
        # Tells the account's continuous synchronization run (in this process) that a
        # record waits; a run in another process finds it on its next pass.
        self._wake = wake
        self._clock = clock

    def listing(
        self,
        limit: int | None,
        states: Sequence[MutationState] | None = None,
        account_id: str | None = None,
    ) -> list[MutationRecord]:
        """The records of changes to messages (flags, keywords, moves), newest first."""
        return self._records.listing(limit, tuple(states or UNFINISHED), account_id)

    def changes(
        self,
        limit: int | None,
        states: Sequence[MutationState] | None = None,
        account_id: str | None = None,
    ) -> list[AnyRecord]:
        """The records of both kinds, newest first by when they were asked for."""
        wanted = tuple(states or UNFINISHED)
        flags: Sequence[AnyRecord] = self._records.listing(limit, wanted, account_id)
        made: Sequence[AnyRecord] = self._creations.listing(limit, wanted, account_id)
        both = heapq.merge(flags, made, key=lambda r: r.created_at, reverse=True)
        return list(itertools.islice(both, limit))

    def find(self, record_id: uuid.UUID) -> AnyRecord | None:
        return self._records.find(record_id) or self._creations.find(record_id)

    def folder_aliases(self, records: Sequence[AnyRecord]) -> dict[int, str]:
        """The alias of every folder these records name: the one each message was in when
        the change was asked for, a move's destination, and a new folder's parent."""
        named: set[int] = set()
        for record in records:
            if isinstance(record, FolderCreationRecord):
                if record.parent_folder_id is not None:
                    named.add(record.parent_folder_id)
                continue
            named.add(record.folder_id)
            destination = destination_of(record)
            if destination is not None:
                named.add(destination)
        return self._records.folder_aliases(named)

    def retry(self, record_id: uuid.UUID) -> Retry | None:
        """A dead-lettered record goes back to pending with its attempts reset, and the
        account's run is woken; any other record is answered as it stands, and so is a
        folder creation whose alias was taken meanwhile."""
        before: AnyRecord | None = self._records.find(record_id)
        revive: Callable[[uuid.UUID, datetime], AnyRecord | None] = self._records.revive
        if before is None:
            before, revive = self._creations.find(record_id), self._creations.revive
        if before is None:
            return None
        if before.state is not MutationState.DEAD_LETTERED:
            return Retry(before, Retried.NOT_DEAD_LETTERED)
        try:
            after = revive(record_id, self._clock())
        except AliasClaimed:
            return Retry(self._creations.find(record_id) or before, Retried.ALIAS_CLAIMED)
        if after is None or after.state is not MutationState.PENDING:
            return Retry(after or before, Retried.NOT_DEAD_LETTERED)
        log.info(
            "flags.change_retried",
            account=after.account_id,
            change=change_of(after),
            change_record_id=str(after.record_id),
        )
        self._wake(after.account_id)
        return Retry(after, Retried.NOW)


def change_of(record: AnyRecord) -> str:
    """The name of the change a record asks for: its kind, or `create-folder`."""
    if isinstance(record, FolderCreationRecord):
        return CREATE_FOLDER
    return record.kind.value


def destination_of(record: MutationRecord) -> int | None:
    """The folder a move record sends its message to; None for any other change."""
    if record.kind is not MutationKind.MOVE:
        return None
    try:
        return int(record.value)
    except ValueError:
        return None
