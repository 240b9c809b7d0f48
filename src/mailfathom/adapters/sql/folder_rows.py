"""Accounts, folders and synchronization progress, as synchronization writes them."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from mailfathom.adapters.sql.schema import accounts, folders, messages, participants
from mailfathom.adapters.sql.store_base import SqlTables, folder_record, folder_values, now
from mailfathom.app.sync.types import FolderRecord
from mailfathom.domain.config import AccountConfig, FolderMapping
from mailfathom.domain.message import HeaderRole, Participant

# Messages whose participants one batch of `stored_participants` carries.
_PARTICIPANT_BATCH = 500


class SqlFolderRows(SqlTables):
    """The account and folder rows of `SyncStore`."""

    def ensure_account(self, account: AccountConfig) -> None:
        """Create or update the account row; a pass that changes nothing writes nothing."""
        wanted = (account.display_name, account.kind.value)
        with self.engine.connect() as c:
            row = c.execute(
                sa.select(accounts.c.display_name, accounts.c.kind).where(
                    accounts.c.account_id == account.account_id
                )
            ).first()
        if row is not None and tuple(row) == wanted:
            return
        with self.engine.begin() as c:
            if row is None:
                c.execute(
                    self._insert(accounts)
                    .values(
                        account_id=account.account_id,
                        display_name=account.display_name,
                        kind=account.kind.value,
                        created_at=now(),
                    )
                    .on_conflict_do_nothing(index_elements=["account_id"])
                )
            c.execute(
                accounts.update()
                .where(accounts.c.account_id == account.account_id)
                .values(display_name=account.display_name, kind=account.kind.value)
            )

    def ensure_folder(self, account_id: str, mapping: FolderMapping) -> FolderRecord:
        """Create or update the folder row from its mapping; unchanged mappings write nothing."""
        return self.ensure_folders(account_id, [mapping])[0]

    def ensure_folders(
        self, account_id: str, mappings: Sequence[FolderMapping]
    ) -> list[FolderRecord]:
        """The folder rows of `mappings`, in their order, created or updated from them. The
        account's rows are read with one query; only a new or changed mapping writes."""
        with self.engine.connect() as c:
            rows = {
                row.remote_name: row
                for row in c.execute(sa.select(folders).where(folders.c.account_id == account_id))
            }
        records: list[FolderRecord] = []
        for mapping in mappings:
            row = rows.get(mapping.remote_name)
            values = folder_values(mapping)
            if row is None or any(getattr(row, k) != v for k, v in values.items()):
                row = self._write_folder(account_id, mapping, present=row is not None)
            records.append(folder_record(row))
        return records

    def _write_folder(
        self, account_id: str, mapping: FolderMapping, *, present: bool
    ) -> sa.Row[Any]:
        values = folder_values(mapping)
        where = (folders.c.account_id == account_id, folders.c.remote_name == mapping.remote_name)
        with self.engine.begin() as c:
            if not present:
                c.execute(
                    self._insert(folders)
                    .values(account_id=account_id, remote_name=mapping.remote_name, **values)
                    .on_conflict_do_nothing(index_elements=["account_id", "remote_name"])
                )
            c.execute(folders.update().where(*where).values(**values))
            return c.execute(sa.select(folders).where(*where)).one()

    def settle(self, account_id: str, mappings: Sequence[FolderMapping]) -> list[FolderRecord]:
        """See `FolderVisibility.settle`; writes only rows that change."""
        wanted = {m.remote_name: folder_values(m) for m in mappings}
        withheld = {"visible_to_tools": False}
        shown: list[FolderRecord] = []
        with self.engine.begin() as c:
            rows = c.execute(sa.select(folders).where(folders.c.account_id == account_id))
            for row in list(rows):
                values = wanted.get(row.remote_name, withheld)
                if all(getattr(row, k) == v for k, v in values.items()):
                    continue
                where = folders.c.folder_id == row.folder_id
                c.execute(folders.update().where(where).values(**values))
                if values["visible_to_tools"] and not row.visible_to_tools:
                    shown.append(folder_record(c.execute(sa.select(folders).where(where)).one()))
        return shown

    def withhold_accounts(self, kept: Collection[str]) -> int:
        with self.engine.begin() as c:
            changed = c.execute(
                folders.update()
                .where(
                    folders.c.account_id.not_in(list(kept)),
                    folders.c.visible_to_tools.is_(True),
                )
                .values(visible_to_tools=False)
            )
        return int(changed.rowcount)

    def stored_participants(self, folder_id: int) -> Iterator[list[Participant]]:
        """The folder's participants, a batch of messages at a time, each statement naming
        the folder's account."""
        with self.engine.connect() as c:
            account_id = c.execute(
                sa.select(folders.c.account_id).where(folders.c.folder_id == folder_id)
            ).scalar_one_or_none()
        if account_id is None:
            return
        after = -1
        while True:
            with self.engine.connect() as c:
                seqs = list(
                    c.execute(
                        sa.select(messages.c.seq)
                        .where(
                            messages.c.account_id == account_id,
                            messages.c.folder_id == folder_id,
                            messages.c.seq > after,
                        )
                        .order_by(messages.c.seq)
                        .limit(_PARTICIPANT_BATCH)
                    ).scalars()
                )
                if not seqs:
                    return
                rows = c.execute(
                    sa.select(
                        participants.c.role, participants.c.address, participants.c.display_name
                    )
                    .where(participants.c.account_id == account_id, participants.c.seq.in_(seqs))
                    .order_by(participants.c.seq, participants.c.position)
                )
                batch = [Participant(HeaderRole(r.role), r.address, r.display_name) for r in rows]
            after = seqs[-1]
            yield batch

    def folder(self, folder_id: int) -> FolderRecord:
        with self.engine.connect() as c:
            row = c.execute(sa.select(folders).where(folders.c.folder_id == folder_id)).one()
        return folder_record(row)

    def record_progress(
        self,
        folder_id: int,
        *,
        uidvalidity: int,
        highest_modseq: int | None,
        uid_next: int | None,
        committed_at: datetime,
        push_supported: bool | None = None,
    ) -> None:
        values: dict[str, Any] = {
            "uidvalidity": uidvalidity,
            "highest_modseq": highest_modseq,
            "uid_next": uid_next,
            "last_committed_at": committed_at,
        }
        if push_supported is not None:
            values["push_supported"] = push_supported
        with self.engine.begin() as c:
            c.execute(folders.update().where(folders.c.folder_id == folder_id).values(**values))
