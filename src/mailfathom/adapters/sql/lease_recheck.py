"""`SqlLeaseRecheck`: the lease recheck (`app.sync.lease_recheck`) made by the store's own
fence (`fencing`), which checks the lease before a transaction's first write: a write that
changes nothing is the check, with no second copy of it to keep in step."""

from __future__ import annotations

import sqlalchemy as sa

from mailfathom.adapters.sql.schema import work_leases

_NOTHING = sa.delete(work_leases).where(sa.false())


class SqlLeaseRecheck:
    def __init__(self, engine: sa.Engine) -> None:
        self._engine = engine

    def recheck(self) -> None:
        with self._engine.begin() as c:
            c.execute(_NOTHING)
