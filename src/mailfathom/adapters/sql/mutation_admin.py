"""Mutation records as the operator sees them, on SQLite and PostgreSQL: `SqlMutationRecords`."""

from __future__ import annotations

import uuid
from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from mailfathom.adapters.sql.mutations import record_of, show_locally
from mailfathom.adapters.sql.schema import folders, mutation_records
from mailfathom.domain.mutations import MutationRecord, MutationState, RequestedMutation

_R = mutation_records.c


def newest(
    table: sa.Table, limit: int | None, states: Sequence[MutationState], account_id: str | None
) -> sa.Select[Any]:
    """The table's records of these states (and of this account when given), newest first."""
    query = (
        sa.select(table)
        .where(table.c.state.in_([s.value for s in states]))
        .order_by(table.c.seq.desc())
        .limit(limit)
    )
    if account_id is not None:
        query = query.where(table.c.account_id == account_id)
    return query


class SqlMutationRecords:
    def __init__(self, engine: sa.Engine) -> None:
        self._engine = engine

    def listing(
        self, limit: int | None, states: Sequence[MutationState], account_id: str | None
    ) -> list[MutationRecord]:
        query = newest(mutation_records, limit, states, account_id)
        with self._engine.connect() as c:
            return [record_of(row) for row in c.execute(query)]

    def find(self, record_id: uuid.UUID) -> MutationRecord | None:
        with self._engine.connect() as c:
            row = c.execute(sa.select(mutation_records).where(_R.record_id == record_id)).first()
        return None if row is None else record_of(row)

    def revive(self, record_id: uuid.UUID, now: datetime) -> MutationRecord | None:
        with self._engine.begin() as c:
            revived = c.execute(
                mutation_records.update()
                .where(
                    _R.record_id == record_id,
                    _R.state == MutationState.DEAD_LETTERED.value,
                )
                .values(
                    state=MutationState.PENDING.value,
                    attempts=0,
                    last_error_code=None,
                    updated_at=now,
                )
            ).rowcount
            row = c.execute(sa.select(mutation_records).where(_R.record_id == record_id)).first()
            if row is None:
                return None
            record = record_of(row)
            if revived:
                # A move shows nothing locally; `show_locally` knows it.
                show_locally(
                    c,
                    str(row.account_id),
                    record.stored_email_id,
                    RequestedMutation(record.kind, record.value),
                )
        return record

    def folder_aliases(self, folder_ids: Collection[int]) -> dict[int, str]:
        if not folder_ids:
            return {}
        with self._engine.connect() as c:
            rows = c.execute(
                sa.select(folders.c.folder_id, folders.c.alias).where(
                    folders.c.folder_id.in_(list(folder_ids))
                )
            )
            return {int(r.folder_id): str(r.alias) for r in rows}
