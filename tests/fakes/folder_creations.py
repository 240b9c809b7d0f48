"""Folder creation records in memory: `FolderCreations`, and the settling of a record a
synchronization run carries to its end."""

from __future__ import annotations

import dataclasses
import threading
import uuid
from datetime import datetime

from mailfathom.app.organize.ports import (
    FolderCreation,
    FolderCreationRequested,
    FolderCreations,
)
from mailfathom.domain.mutations import OPEN_STATES, MutationState


@dataclasses.dataclass
class _Row:
    creation: FolderCreation
    requester: str
    request_id: str


class InMemoryFolderCreations:
    def __init__(self) -> None:
        self._lock = threading.Lock()
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
            self._rows.append(_Row(creation, requester, request_id))
            return creation

    def held(self, account_id: str, requester: str, request_id: str) -> FolderCreation | None:
        with self._lock:
            row = self._held(account_id, requester, request_id)
            return None if row is None else row.creation

    def alias_claimed(self, account_id: str, alias: str) -> bool:
        claiming = OPEN_STATES | {MutationState.COMPLETED}
        with self._lock:
            return any(
                r.creation.account_id == account_id
                and r.creation.alias.casefold() == alias.casefold()
                and r.creation.state in claiming
                for r in self._rows
            )

    def settle(
        self, creation_id: uuid.UUID, state: MutationState, error_code: int | None, now: datetime
    ) -> None:
        with self._lock:
            for row in self._rows:
                if row.creation.creation_id == creation_id:
                    row.creation = dataclasses.replace(
                        row.creation, state=state, last_error_code=error_code
                    )


_: FolderCreations = InMemoryFolderCreations()
