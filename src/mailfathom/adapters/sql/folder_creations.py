"""Folder creation records on SQLite and PostgreSQL: `SqlFolderCreations`, as the organizing
call writes them and as the synchronization run carries them."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from mailfathom.adapters.sql.schema import folder_creations, folders
from mailfathom.app.organize.ports import FolderCreation, FolderCreationRequested, OpenCreation
from mailfathom.domain.config import FolderMapping
from mailfathom.domain.mutations import OPEN_STATES, MutationState

_C = folder_creations.c
_F = folders.c
_CLAIMING = [s.value for s in OPEN_STATES] + [MutationState.COMPLETED.value]


def claimed_by_record(
    c: sa.Connection, account_id: str, alias: str, other_than: uuid.UUID | None = None
) -> bool:
    """Whether a pending, converging or completed record of the account (other than
    `other_than`) publishes a folder under this alias, compared without regard to case."""
    query = sa.select(sa.func.count()).where(
        _C.account_id == account_id,
        _C.alias_key == alias.casefold(),
        _C.state.in_(_CLAIMING),
    )
    if other_than is not None:
        query = query.where(_C.creation_id != other_than)
    return bool(c.execute(query).scalar_one())


def _creation(row: Any) -> FolderCreation:
    return FolderCreation(
        creation_id=row.creation_id,
        account_id=row.account_id,
        name=row.name,
        alias=row.alias,
        parent_folder_id=row.parent_folder_id,
        state=MutationState(row.state),
        last_error_code=row.last_error_code,
        folder_id=row.folder_id,
    )


class SqlFolderCreations:
    def __init__(self, engine: sa.Engine) -> None:
        self._engine = engine

    # -- as the organizing call writes them ---------------------------------------------

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
        try:
            return self._request(
                account_id, name, alias, parent_folder_id, requester, request_id, now
            )
        except sa.exc.IntegrityError:
            # A racing call with the same identity committed first: answer what it wrote.
            return self._request(
                account_id, name, alias, parent_folder_id, requester, request_id, now
            )

    def _request(
        self,
        account_id: str,
        name: str,
        alias: str,
        parent_folder_id: int | None,
        requester: str,
        request_id: str,
        now: datetime,
    ) -> FolderCreation:
        identity = (
            _C.account_id == account_id,
            _C.requester == requester,
            _C.request_id == request_id,
        )
        with self._engine.begin() as c:
            held = c.execute(sa.select(folder_creations).where(*identity)).first()
            if held is not None:
                if (held.name, held.parent_folder_id) != (name, parent_folder_id):
                    raise FolderCreationRequested
                return _creation(held)
            c.execute(
                folder_creations.insert().values(
                    creation_id=uuid.uuid4(),
                    account_id=account_id,
                    name=name,
                    parent_folder_id=parent_folder_id,
                    alias=alias,
                    alias_key=alias.casefold(),
                    requester=requester,
                    request_id=request_id,
                    state=MutationState.PENDING.value,
                    attempts=0,
                    created_at=now,
                    updated_at=now,
                )
            )
            return _creation(c.execute(sa.select(folder_creations).where(*identity)).one())

    def held(self, account_id: str, requester: str, request_id: str) -> FolderCreation | None:
        query = sa.select(folder_creations).where(
            _C.account_id == account_id, _C.requester == requester, _C.request_id == request_id
        )
        with self._engine.connect() as c:
            row = c.execute(query).first()
        return _creation(row) if row is not None else None

    def alias_claimed(self, account_id: str, alias: str) -> bool:
        with self._engine.connect() as c:
            return claimed_by_record(c, account_id, alias)

    def find(self, creation_id: uuid.UUID) -> FolderCreation | None:
        with self._engine.connect() as c:
            row = c.execute(
                sa.select(folder_creations).where(_C.creation_id == creation_id)
            ).first()
        return _creation(row) if row is not None else None

    # -- as the synchronization run carries them ----------------------------------------

    def created_folders(self, account_id: str) -> list[FolderMapping]:
        """The folders created through records of the account, as mappings of their own."""
        query = (
            sa.select(_F.remote_name, _F.alias)
            .join(folder_creations, _C.folder_id == _F.folder_id)
            .where(_C.account_id == account_id, _C.state == MutationState.COMPLETED.value)
            .order_by(_C.seq)
        )
        with self._engine.connect() as c:
            return [FolderMapping(r.remote_name, r.alias) for r in c.execute(query)]

    def open_count(self, account_id: str) -> int:
        query = sa.select(sa.func.count()).where(
            _C.account_id == account_id, _C.state.in_([s.value for s in OPEN_STATES])
        )
        with self._engine.connect() as c:
            return int(c.execute(query).scalar_one())

    def open_creations(self, account_id: str) -> list[OpenCreation]:
        parent = folders.alias("parent")
        query = (
            sa.select(
                _C.creation_id,
                _C.name,
                _C.alias,
                _C.parent_folder_id,
                _C.noted_remote_name,
                _C.attempts,
                parent.c.remote_name.label("parent_remote"),
            )
            .outerjoin(
                parent,
                sa.and_(
                    parent.c.folder_id == _C.parent_folder_id,
                    parent.c.account_id == _C.account_id,
                ),
            )
            .where(_C.account_id == account_id, _C.state.in_([s.value for s in OPEN_STATES]))
            .order_by(_C.seq)
        )
        with self._engine.connect() as c:
            return [
                OpenCreation(
                    creation_id=r.creation_id,
                    name=r.name,
                    alias=r.alias,
                    parent_remote=r.parent_remote,
                    parent_gone=r.parent_folder_id is not None and r.parent_remote is None,
                    noted_remote_name=r.noted_remote_name,
                    attempts=r.attempts,
                )
                for r in c.execute(query)
            ]

    def begin(self, creation_id: uuid.UUID, remote_name: str, now: datetime) -> None:
        with self._engine.begin() as c:
            c.execute(
                folder_creations.update()
                .where(_C.creation_id == creation_id)
                .values(
                    state=MutationState.CONVERGING.value,
                    attempts=_C.attempts + 1,
                    noted_remote_name=remote_name,
                    updated_at=now,
                )
            )

    def created(self, creation_id: uuid.UUID, remote_name: str, now: datetime) -> int:
        with self._engine.begin() as c:
            record = c.execute(
                sa.select(_C.account_id, _C.alias).where(_C.creation_id == creation_id)
            ).one()
            where = (_F.account_id == record.account_id, _F.remote_name == remote_name)
            row = c.execute(sa.select(_F.folder_id).where(*where)).first()
            if row is None:
                c.execute(
                    folders.insert().values(
                        account_id=record.account_id,
                        remote_name=remote_name,
                        alias=record.alias,
                        role=None,
                        visible_to_tools=True,
                    )
                )
                row = c.execute(sa.select(_F.folder_id).where(*where)).one()
            folder_id = int(row.folder_id)
            c.execute(
                folder_creations.update()
                .where(_C.creation_id == creation_id)
                .values(
                    state=MutationState.COMPLETED.value,
                    last_error_code=None,
                    folder_id=folder_id,
                    updated_at=now,
                )
            )
        return folder_id

    def settle(
        self, creation_id: uuid.UUID, state: MutationState, error_code: int | None, now: datetime
    ) -> None:
        with self._engine.begin() as c:
            c.execute(
                folder_creations.update()
                .where(_C.creation_id == creation_id)
                .values(state=state.value, last_error_code=error_code, updated_at=now)
            )
