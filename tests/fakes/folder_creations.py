"""Folder creation records in memory: `FolderCreations`, the operator's `FolderCreationRecords`,
and the attempts and settling of a record a synchronization run carries to its end."""

from __future__ import annotations

import dataclasses
import threading
import uuid
from collections.abc import Sequence
from datetime import datetime

from fakes.local_copy import InMemoryLocalCopy
from mailfathom.app.flags.ports import AliasClaimed, FolderCreationRecords
from mailfathom.app.organize.ports import (
    FolderCreation,
    FolderCreationRequested,
    FolderCreations,
)
from mailfathom.domain.mutations import OPEN_STATES, FolderCreationRecord, MutationState

_CLAIMING = OPEN_STATES | {MutationState.COMPLETED}


@dataclasses.dataclass
class _Row:
    creation: FolderCreation
    requester: str
    request_id: str
    created_at: datetime
    updated_at: datetime
    attempts: int = 0
    noted_remote_name: str | None = None

    def seen(self) -> FolderCreationRecord:
        c = self.creation
        return FolderCreationRecord(
            record_id=c.creation_id,
            account_id=c.account_id,
            alias=c.alias,
            parent_folder_id=c.parent_folder_id,
            requester=self.requester,
            state=c.state,
            attempts=self.attempts,
            last_error_code=c.last_error_code,
            created_at=self.created_at,
            updated_at=self.updated_at,
        )


class InMemoryFolderCreations:
    def __init__(self, local: InMemoryLocalCopy) -> None:
        self._lock = threading.Lock()
        self._local = local
        self._rows: list[_Row] = []

    def _held(self, account_id: str, requester: str, request_id: str) -> _Row | None:
        return next(
            (
                r
                for r in self._rows
                if (r.creation.account_id, r.requester, r.request_id)
                == (account_id, requester, request_id)
            ),
            None,
        )

    def _row(self, creation_id: uuid.UUID) -> _Row | None:
        return next((r for r in self._rows if r.creation.creation_id == creation_id), None)

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
        with self._lock:
            held = self._held(account_id, requester, request_id)
            if held is not None:
                if (held.creation.name, held.creation.parent_folder_id) != (
                    name,
                    parent_folder_id,
                ):
                    raise FolderCreationRequested
                return held.creation
            creation = FolderCreation(
                creation_id=uuid.uuid4(),
                account_id=account_id,
                name=name,
                alias=alias,
                parent_folder_id=parent_folder_id,
                state=MutationState.PENDING,
                last_error_code=None,
                folder_id=None,
            )
            self._rows.append(_Row(creation, requester, request_id, now, now))
            return creation

    def held(self, account_id: str, requester: str, request_id: str) -> FolderCreation | None:
        with self._lock:
            row = self._held(account_id, requester, request_id)
            return None if row is None else row.creation

    def alias_claimed(self, account_id: str, alias: str) -> bool:
        with self._lock:
            return self._claimed(account_id, alias, None)

    def _claimed(self, account_id: str, alias: str, other_than: uuid.UUID | None) -> bool:
        return any(
            r.creation.account_id == account_id
            and r.creation.alias.casefold() == alias.casefold()
            and r.creation.state in _CLAIMING
            and r.creation.creation_id != other_than
            for r in self._rows
        )

    def begin(self, creation_id: uuid.UUID, remote_name: str, now: datetime) -> None:
        with self._lock:
            row = self._row(creation_id)
            if row is not None:
                row.creation = dataclasses.replace(row.creation, state=MutationState.CONVERGING)
                row.attempts += 1
                row.noted_remote_name = remote_name
                row.updated_at = now

    def settle(
        self, creation_id: uuid.UUID, state: MutationState, error_code: int | None, now: datetime
    ) -> None:
        with self._lock:
            row = self._row(creation_id)
            if row is not None:
                row.creation = dataclasses.replace(
                    row.creation, state=state, last_error_code=error_code
                )
                row.updated_at = now

    # -- FolderCreationRecords ---------------------------------------------------------------

    def listing(
        self, limit: int | None, states: Sequence[MutationState], account_id: str | None
    ) -> list[FolderCreationRecord]:
        with self._lock:
            chosen = [
                r.seen()
                for r in reversed(self._rows)
                if r.creation.state in states and account_id in (None, r.creation.account_id)
            ]
            return chosen[:limit]

    def find(self, record_id: uuid.UUID) -> FolderCreationRecord | None:
        with self._lock:
            row = self._row(record_id)
            return None if row is None else row.seen()

    def revive(self, record_id: uuid.UUID, now: datetime) -> FolderCreationRecord | None:
        with self._lock:
            row = self._row(record_id)
            if row is None or row.creation.state is not MutationState.DEAD_LETTERED:
                return None if row is None else row.seen()
            account_id, alias = row.creation.account_id, row.creation.alias
            served = self._local.readable_folders([account_id])
            if any(f.alias.casefold() == alias.casefold() for f in served) or self._claimed(
                account_id, alias, record_id
            ):
                raise AliasClaimed
            row.creation = dataclasses.replace(
                row.creation, state=MutationState.PENDING, last_error_code=None
            )
            row.attempts = 0
            row.updated_at = now
            return row.seen()


_: FolderCreations = InMemoryFolderCreations(InMemoryLocalCopy())
__: FolderCreationRecords = InMemoryFolderCreations(InMemoryLocalCopy())
