"""What the SQL store's classes share: an engine, dialect-aware inserts, folder rows."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

from mailfathom.adapters.sql.schema import folders, messages, repair_requests
from mailfathom.app.sync.types import FolderRecord
from mailfathom.domain.config import FolderMapping

CHUNK = 500
"""Rows per statement where a statement names many rows."""


def now() -> datetime:
    return datetime.now(UTC)


def folder_record(row: sa.Row[Any]) -> FolderRecord:
    return FolderRecord(
        folder_id=row.folder_id,
        account_id=row.account_id,
        remote_name=row.remote_name,
        alias=row.alias,
        role=row.role,
        visible_to_tools=row.visible_to_tools,
        uidvalidity=row.uidvalidity,
        highest_modseq=row.highest_modseq,
        uid_next=row.uid_next,
        last_committed_at=row.last_committed_at,
        push_supported=row.push_supported,
    )


def folder_values(mapping: FolderMapping) -> dict[str, Any]:
    """The columns of a folder row its mapping decides."""
    return {
        "alias": mapping.alias,
        "role": mapping.role.value if mapping.role else None,
        "visible_to_tools": mapping.visible_to_tools,
    }


def account_of(c: sa.Connection, folder_id: int) -> str:
    """The account a folder belongs to, which every statement on its messages names (so that
    a partitioned or distributed store reads one account's part)."""
    found = c.execute(sa.select(folders.c.account_id).where(folders.c.folder_id == folder_id))
    return str(found.scalar_one())


def accounts_of(c: sa.Connection, folder_ids: Sequence[int]) -> list[str]:
    """The accounts the folders belong to (see `account_of`), for a statement on the
    messages of folders that may lie in several accounts."""
    found = c.execute(
        sa.select(folders.c.account_id).where(folders.c.folder_id.in_(folder_ids)).distinct()
    )
    return sorted(found.scalars())


def serialize_writers(c: sa.Connection, table: sa.Table) -> None:
    """Make the other writers of `table` wait for this transaction's end (PostgreSQL), so a
    bound counted in it still holds when it commits; readers are not held. SQLite needs
    nothing: the store's engine begins every writing transaction with BEGIN IMMEDIATE."""
    if c.dialect.name == "postgresql":
        c.execute(sa.text(f"LOCK TABLE {table.name} IN SHARE ROW EXCLUSIVE MODE"))


class SqlTables:
    """A part of the store on one engine."""

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine
        self._dialect = engine.dialect.name

    def _insert(self, table: sa.Table) -> Any:
        if self._dialect == "postgresql":
            return postgresql.insert(table)
        return sqlite.insert(table)

    def _record_repair_request(self, account_id: str, seq: int, reason: str) -> None:
        """Record that a row of `account_id` must have its content fetched again; a second
        request for the same row changes nothing."""
        of_message = sa.select(
            messages.c.account_id,
            messages.c.seq,
            sa.literal(reason, sa.String(32)),
            sa.literal(now(), repair_requests.c.requested_at.type),
        ).where(messages.c.account_id == account_id, messages.c.seq == seq)
        statement = (
            self._insert(repair_requests)
            .from_select(["account_id", "seq", "reason", "requested_at"], of_message)
            .on_conflict_do_nothing(index_elements=["account_id", "seq"])
        )
        with self.engine.begin() as c:
            c.execute(statement)
