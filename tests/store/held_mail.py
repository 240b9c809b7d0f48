"""Mail as synchronization stores it, for the contracts of the ports that read and change
the local copy (flag changes, moves): written through the SQL sync store on SQLite and
PostgreSQL, or into the in-memory local copy, by methods of the same names."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Protocol

import sqlalchemy as sa

from mailfathom.adapters.sql.schema import keywords, messages
from mailfathom.adapters.sql.sync_store import SqlSyncStore
from mailfathom.app.flags.ports import MutationLedger, MutationStore
from mailfathom.app.organize.ports import FolderCreations
from mailfathom.app.sync.types import FlagChange, NewMessage
from mailfathom.domain.config import AccountConfig, AccountKind, FolderMapping
from mailfathom.domain.content_state import ContentState, RemoteFlags
from mailfathom.domain.folders import FolderRole
from mailfathom.domain.mutations import MutationRecord, MutationState

from .reading_builders import Mail


class HeldMail(Protocol):
    def ensure_folder(
        self,
        account_id: str,
        remote_name: str,
        alias: str,
        role: FolderRole | None = None,
        visible: bool = True,
    ) -> int: ...

    def record_progress(self, folder_id: int, uidvalidity: int, committed_at: datetime) -> None: ...

    def add_messages(
        self,
        folder_id: int,
        uidvalidity: int,
        items: Sequence[tuple[int, RemoteFlags, int | None]],
        committed_at: datetime,
    ) -> list[uuid.UUID]: ...

    def remove_uids(self, folder_id: int, uidvalidity: int, uids: Iterable[int]) -> None: ...

    def apply_flag_changes(
        self,
        folder_id: int,
        uidvalidity: int,
        changes: Sequence[FlagChange],
        observed_at: datetime,
    ) -> None: ...

    def flags_of(self, stored_email_id: uuid.UUID) -> tuple[int, RemoteFlags]: ...


class Mutations(MutationStore, MutationLedger, Protocol):
    """The record store as a flag change and a synchronization run both use it."""

    def find(self, record_id: uuid.UUID) -> MutationRecord | None: ...


class Creations(FolderCreations, Protocol):
    """Folder creation records as a call writes them, and their attempts and end as a run
    carries them."""

    def begin(self, creation_id: uuid.UUID, remote_name: str, now: datetime) -> None: ...

    def settle(
        self, creation_id: uuid.UUID, state: MutationState, error_code: int | None, now: datetime
    ) -> None: ...


class SqlHeldMail:
    def __init__(self, engine: sa.Engine) -> None:
        self._engine = engine
        self._store = SqlSyncStore(engine)

    def ensure_folder(
        self,
        account_id: str,
        remote_name: str,
        alias: str,
        role: FolderRole | None = None,
        visible: bool = True,
    ) -> int:
        self._store.ensure_account(
            AccountConfig(
                account_id=account_id, display_name=account_id, kind=AccountKind.LOCAL, folders=()
            )
        )
        mapping = FolderMapping(remote_name, alias, role, visible_to_tools=visible)
        return self._store.ensure_folder(account_id, mapping).folder_id

    def record_progress(self, folder_id: int, uidvalidity: int, committed_at: datetime) -> None:
        self._store.record_progress(
            folder_id,
            uidvalidity=uidvalidity,
            highest_modseq=None,
            uid_next=None,
            committed_at=committed_at,
        )

    def add_messages(
        self,
        folder_id: int,
        uidvalidity: int,
        items: Sequence[tuple[int, RemoteFlags, int | None]],
        committed_at: datetime,
    ) -> list[uuid.UUID]:
        new = [
            NewMessage(
                uid=uid,
                size_octets=1000,
                flags=flags,
                modseq=modseq,
                received_at=committed_at,
                normalized=Mail(f"message {uid}").normalized(),
                content_state=ContentState.STORED,
                content_key=f"{folder_id:08x}{uid:056x}",
            )
            for uid, flags, modseq in items
        ]
        self._store.add_messages(self._store.folder(folder_id), uidvalidity, new, committed_at)
        m = messages.c
        with self._engine.connect() as c:
            ids = dict(
                c.execute(
                    sa.select(m.uid, m.stored_email_id).where(
                        m.folder_id == folder_id, m.uidvalidity == uidvalidity
                    )
                ).all()
            )
        return [ids[uid] for uid, _, _ in items]

    def remove_uids(self, folder_id: int, uidvalidity: int, uids: Iterable[int]) -> None:
        self._store.remove_uids(folder_id, uidvalidity, uids)

    def apply_flag_changes(
        self,
        folder_id: int,
        uidvalidity: int,
        changes: Sequence[FlagChange],
        observed_at: datetime,
    ) -> None:
        self._store.apply_flag_changes(folder_id, uidvalidity, changes, observed_at)

    def flags_of(self, stored_email_id: uuid.UUID) -> tuple[int, RemoteFlags]:
        m = messages.c
        with self._engine.connect() as c:
            row = c.execute(
                sa.select(
                    m.seq, m.folder_id, m.seen, m.flagged, m.answered, m.draft, m.deleted
                ).where(m.stored_email_id == stored_email_id)
            ).one()
            words = c.execute(sa.select(keywords.c.keyword).where(keywords.c.seq == row.seq))
            flags = RemoteFlags(
                seen=row.seen,
                flagged=row.flagged,
                answered=row.answered,
                draft=row.draft,
                deleted=row.deleted,
                keywords=frozenset(words.scalars()),
            )
        return int(row.folder_id), flags
