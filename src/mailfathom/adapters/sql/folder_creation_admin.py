"""Folder creation records as the operator sees them, on SQLite and PostgreSQL:
`SqlFolderCreationRecords`."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from mailfathom.adapters.sql.folder_creations import claimed_by_record
from mailfathom.adapters.sql.mutation_admin import newest
from mailfathom.adapters.sql.schema import folder_creations, folders
from mailfathom.app.flags.ports import AliasClaimed
from mailfathom.domain.mutations import FolderCreationRecord, MutationState

_C = folder_creations.c
_F = folders.c


def _record(row: Any) -> FolderCreationRecord:
    return FolderCreationRecord(
        record_id=row.creation_id,
        account_id=row.account_id,
        alias=row.alias,
        parent_folder_id=row.parent_folder_id,
        requester=row.requester,
        state=MutationState(row.state),
        attempts=row.attempts,
        last_error_code=row.last_error_code,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def _claimed(c: sa.Connection, record: FolderCreationRecord) -> bool:
    """Whether another record claims the record's alias, or a folder visible to tools
    carries it (compared as `create_folder` compares them, without regard to case)."""
    if claimed_by_record(c, record.account_id, record.alias, other_than=record.record_id):
        return True
    served = sa.select(_F.alias).where(
        _F.account_id == record.account_id, _F.visible_to_tools.is_(True)
    )
    key = record.alias.casefold()
    return any(str(alias).casefold() == key for alias in c.execute(served).scalars())


class SqlFolderCreationRecords:
    def __init__(self, engine: sa.Engine) -> None:
        self._engine = engine

    def listing(
        self, limit: int | None, states: Sequence[MutationState], account_id: str | None
    ) -> list[FolderCreationRecord]:
        query = newest(folder_creations, limit, states, account_id)
        with self._engine.connect() as c:
            return [_record(row) for row in c.execute(query)]

    def find(self, record_id: uuid.UUID) -> FolderCreationRecord | None:
        with self._engine.connect() as c:
            row = c.execute(sa.select(folder_creations).where(_C.creation_id == record_id)).first()
        return None if row is None else _record(row)

    def revive(self, record_id: uuid.UUID, now: datetime) -> FolderCreationRecord | None:
        with self._engine.begin() as c:
            row = c.execute(sa.select(folder_creations).where(_C.creation_id == record_id)).first()
            if row is None:
                return None
            record = _record(row)
            if record.state is not MutationState.DEAD_LETTERED:
                return record
            if _claimed(c, record):
                raise AliasClaimed
            c.execute(
                folder_creations.update()
                .where(
                    _C.creation_id == record_id,
                    _C.state == MutationState.DEAD_LETTERED.value,
                )
                .values(
                    state=MutationState.PENDING.value,
                    attempts=0,
                    last_error_code=None,
                    updated_at=now,
                )
            )
            row = c.execute(sa.select(folder_creations).where(_C.creation_id == record_id)).one()
        return _record(row)
