"""`SyncFailureStore`: the last coded failure of each account's and folder's synchronization,
kept in `sync_failures` (folder_id 0: the account's pass as a whole)."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

import sqlalchemy as sa

from mailfathom.adapters.sql.schema import sync_failures
from mailfathom.domain.sync_failures import SyncFailure

_ACCOUNT = 0
_F = sync_failures.c


class SqlSyncFailures:
    """A pass that succeeds reads one row set and writes only when it clears something, so
    a healthy account costs one read per pass."""

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine

    def failed(self, account_id: str, folder_id: int | None, code: int, at: datetime) -> None:
        key = (_F.account_id == account_id) & (_F.folder_id == (folder_id or _ACCOUNT))
        values = {"code": code, "failed_at": at}
        for _ in range(2):
            try:
                with self.engine.begin() as c:
                    if c.execute(sa.update(sync_failures).where(key).values(values)).rowcount:
                        return
                    c.execute(
                        sa.insert(sync_failures).values(
                            account_id=account_id, folder_id=folder_id or _ACCOUNT, **values
                        )
                    )
                    return
            except sa.exc.IntegrityError:
                continue  # another thread inserted it first: update that row

    def passed(self, account_id: str, folder_ids: Collection[int]) -> None:
        cleared = (_F.account_id == account_id) & _F.folder_id.in_([_ACCOUNT, *folder_ids])
        with self.engine.connect() as c:
            if c.execute(sa.select(_F.folder_id).where(cleared).limit(1)).first() is None:
                return
        with self.engine.begin() as c:
            c.execute(sa.delete(sync_failures).where(cleared))

    def failures(self) -> list[SyncFailure]:
        with self.engine.connect() as c:
            rows = c.execute(sa.select(sync_failures).order_by(_F.account_id, _F.folder_id)).all()
        return [
            SyncFailure(r.account_id, r.folder_id or None, int(r.code), r.failed_at) for r in rows
        ]
