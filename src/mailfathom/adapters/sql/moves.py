"""Move records as the moves' convergence reads and settles them: `SqlMoveLedger`."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime

import sqlalchemy as sa

from mailfathom.adapters.sql.mutations import SqlMutationStore
from mailfathom.adapters.sql.schema import folders, messages, mutation_records
from mailfathom.adapters.sql.sync_store import SqlSyncStore
from mailfathom.app.organize.ports import OpenMove
from mailfathom.domain.mutations import OPEN_STATES, MutationKind

_R = mutation_records.c
_M = messages.c
_F = folders.c


class SqlMoveLedger(SqlMutationStore):
    """`begin` and `settle` are the flag records' own; `forget` and the removal of a row a
    pass stored meanwhile are the synchronization store's, so a conversation and the
    content store stay as a pass would leave them."""

    def __init__(self, engine: sa.Engine, rows: SqlSyncStore) -> None:
        super().__init__(engine)
        self._rows = rows

    def open_moves(self, account_id: str) -> list[OpenMove]:
        with self._engine.connect() as c:
            places = {
                row.folder_id: (row.remote_name, row.uidvalidity)
                for row in c.execute(
                    sa.select(_F.folder_id, _F.remote_name, _F.uidvalidity).where(
                        _F.account_id == account_id
                    )
                )
            }
            records = list(
                c.execute(
                    sa.select(mutation_records)
                    .where(
                        _R.account_id == account_id,
                        _R.kind == MutationKind.MOVE.value,
                        _R.state.in_([s.value for s in OPEN_STATES]),
                    )
                    .order_by(_R.seq)
                )
            )
            emails = [r.stored_email_id for r in records]
            rows = (
                {
                    row.stored_email_id: row
                    for row in c.execute(
                        sa.select(
                            _M.stored_email_id,
                            _M.folder_id,
                            _M.uidvalidity,
                            _M.uid,
                            _M.message_id_header,
                        ).where(_M.stored_email_id.in_(emails))
                    )
                }
                if emails
                else {}
            )
        found = []
        for r in records:
            row = rows.get(r.stored_email_id)
            current = (
                row is not None and places.get(row.folder_id, ("", None))[1] == row.uidvalidity
            )
            destination = places.get(int(r.value))
            found.append(
                OpenMove(
                    record_id=r.record_id,
                    stored_email_id=r.stored_email_id,
                    source_folder_id=r.folder_id,
                    source_remote=places.get(r.folder_id, ("", None))[0],
                    destination_folder_id=int(r.value),
                    destination_remote=destination[0] if destination else None,
                    row_folder_id=row.folder_id if row is not None else None,
                    row_uidvalidity=row.uidvalidity if current and row is not None else None,
                    row_uid=row.uid if current and row is not None else None,
                    message_id=row.message_id_header if row is not None else None,
                    noted_source=(
                        (r.source_uidvalidity, r.source_uid) if r.source_uid is not None else None
                    ),
                    noted_destination=(
                        (r.destination_uidvalidity, r.destination_uid_next)
                        if r.destination_uid_next is not None
                        else None
                    ),
                    attempts=r.attempts,
                )
            )
        return found

    def note(
        self,
        sources: Mapping[uuid.UUID, tuple[int, int]],
        destination: tuple[int, int],
        now: datetime,
    ) -> None:
        with self._engine.begin() as c:
            for record_id, (uidvalidity, uid) in sources.items():
                c.execute(
                    mutation_records.update()
                    .where(_R.record_id == record_id)
                    .values(
                        source_uidvalidity=uidvalidity,
                        source_uid=uid,
                        destination_uidvalidity=destination[0],
                        destination_uid_next=destination[1],
                        updated_at=now,
                    )
                )

    def resource(self, sources: Mapping[uuid.UUID, int], now: datetime) -> None:
        with self._engine.begin() as c:
            for record_id, folder_id in sources.items():
                c.execute(
                    mutation_records.update()
                    .where(_R.record_id == record_id, _R.source_uid.is_(None))
                    .values(folder_id=folder_id, updated_at=now)
                )

    def repoint(self, placed: Mapping[uuid.UUID, int], folder_id: int, uidvalidity: int) -> None:
        if not placed:
            return
        with self._engine.connect() as c:
            taken = list(
                c.execute(
                    sa.select(_M.uid).where(
                        _M.folder_id == folder_id,
                        _M.uidvalidity == uidvalidity,
                        _M.uid.in_(list(placed.values())),
                        _M.stored_email_id.not_in(list(placed)),
                    )
                ).scalars()
            )
        if taken:
            # A pass of the destination stored the copy before this run re-pointed the row.
            self._rows.remove_uids(folder_id, uidvalidity, taken)
        with self._engine.begin() as c:
            for stored_email_id, uid in placed.items():
                c.execute(
                    messages.update()
                    .where(_M.stored_email_id == stored_email_id)
                    .values(folder_id=folder_id, uidvalidity=uidvalidity, uid=uid, modseq=None)
                )

    def forget(self, stored_email_ids: Sequence[uuid.UUID]) -> None:
        if not stored_email_ids:
            return
        with self._engine.connect() as c:
            rows = list(
                c.execute(
                    sa.select(_M.folder_id, _M.uidvalidity, _M.uid).where(
                        _M.stored_email_id.in_(list(stored_email_ids))
                    )
                )
            )
        for row in rows:
            self._rows.remove_uids(row.folder_id, row.uidvalidity, [row.uid])
