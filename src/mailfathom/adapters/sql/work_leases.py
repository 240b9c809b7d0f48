"""Leases on background work on SQLite and PostgreSQL: `SqlWorkLeases`.

A claim is one transaction: on PostgreSQL the free or expired rows are selected `FOR UPDATE
SKIP LOCKED` (two workers claiming at once take different rows, and a row a fenced write
holds `FOR SHARE` is skipped until that write commits), then taken with a conditional UPDATE
that adds one to the fence. SQLite has one writer at a time (every write transaction begins
IMMEDIATE), so the conditional UPDATE alone decides. Renewal and release name the fence they
were claimed under, so a worker whose lease was taken over changes nothing; each lease is
renewed in a short transaction of its own that skips a row locked by the holder's own open
write instead of waiting for it, so one long write delays no renewal.

Expiry and liveness are read against one clock every worker shares (`now`): PostgreSQL's, so
a machine whose clock runs ahead neither sees the others dead nor their leases expired; on
SQLite, one machine's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

from mailfathom.adapters.sql.schema import lease_workers, work_leases
from mailfathom.app.sync.lease_ports import Lease, LeaseKind

_L = work_leases.c
_W = lease_workers.c
# A worker not seen for this long is forgotten (a heartbeat table does not grow forever).
_FORGET_AFTER = timedelta(hours=1)


def _free(now: datetime) -> sa.ColumnElement[bool]:
    return sa.or_(_L.holder.is_(None), _L.expires_at.is_(None), _L.expires_at <= now)


class SqlWorkLeases:
    def __init__(
        self, engine: sa.Engine, clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    ) -> None:
        """`clock`: this machine's, read on SQLite only (where one machine shares the store)."""
        self._engine = engine
        self._clock = clock

    def now(self) -> datetime:
        if self._engine.dialect.name != "postgresql":
            return self._clock()
        with self._engine.connect() as c:
            stamp: datetime = c.execute(sa.select(sa.func.now())).scalar_one()
        return stamp.astimezone(UTC)

    def offer(self, kind: LeaseKind, subjects: Sequence[str]) -> None:
        with self._engine.begin() as c:
            known = set(
                c.execute(
                    sa.select(_L.subject).where(_L.kind == kind.value, _L.subject.in_(subjects))
                ).scalars()
            )
            missing = [s for s in dict.fromkeys(subjects) if s not in known]
            if not missing:
                return
            rows = [{"kind": kind.value, "subject": s, "fence": 0} for s in missing]
            dialect = postgresql if c.dialect.name == "postgresql" else sqlite
            insert = dialect.insert(work_leases)
            c.execute(insert.on_conflict_do_nothing(), rows)

    def beat(self, worker: str, now: datetime, until: datetime) -> list[str]:
        with self._engine.begin() as c:
            updated = c.execute(
                sa.update(lease_workers).where(_W.worker_id == worker).values(seen_until=until)
            ).rowcount
            if updated == 0:
                c.execute(sa.insert(lease_workers).values(worker_id=worker, seen_until=until))
            c.execute(sa.delete(lease_workers).where(_W.seen_until < now - _FORGET_AFTER))
            live = c.execute(
                sa.select(_W.worker_id).where(_W.seen_until > now).order_by(_W.worker_id)
            ).scalars()
            return [str(name) for name in live]

    def claim(
        self,
        worker: str,
        kind: LeaseKind,
        subjects: Sequence[str],
        now: datetime,
        until: datetime,
        limit: int,
    ) -> list[Lease]:
        if limit <= 0 or not subjects:
            return []
        with self._engine.begin() as c:
            query = (
                sa.select(_L.subject)
                .where(_L.kind == kind.value, _L.subject.in_(subjects), _free(now))
                .order_by(_L.expires_at.nulls_first(), _L.subject)
                .limit(limit)
            )
            if c.dialect.name == "postgresql":
                query = query.with_for_update(skip_locked=True)
            taken: list[Lease] = []
            for subject in c.execute(query).scalars().all():
                fence = c.execute(
                    sa.update(work_leases)
                    .where(_L.kind == kind.value, _L.subject == subject, _free(now))
                    .values(holder=worker, fence=_L.fence + 1, expires_at=until)
                    .returning(_L.fence)
                ).scalar_one_or_none()
                if fence is not None:
                    taken.append(Lease(kind, subject, int(fence)))
            return taken

    def renew(
        self, worker: str, leases: Sequence[Lease], now: datetime, until: datetime
    ) -> set[str]:
        return {lease.subject for lease in leases if self._renew(worker, lease, until)}

    def _renew(self, worker: str, lease: Lease, until: datetime) -> bool:
        """One lease in one short transaction, so a lease whose row is locked holds up no
        other. On PostgreSQL a row the holder's own fenced write holds FOR SHARE is skipped,
        not waited for; it counts as kept while the row still names this holder and fence
        (the write's commit comes first, and the next round renews it)."""
        with self._engine.begin() as c:
            mine = sa.select(_L.fence).where(*_held(worker, lease))
            if c.dialect.name != "postgresql":
                return bool(
                    c.execute(
                        sa.update(work_leases).where(*_held(worker, lease)).values(expires_at=until)
                    ).rowcount
                )
            if c.execute(_locked(mine)).first() is None:
                return c.execute(mine).first() is not None
            c.execute(sa.update(work_leases).where(*_held(worker, lease)).values(expires_at=until))
            return True

    def release(self, worker: str, leases: Sequence[Lease]) -> None:
        """Each lease in a transaction of its own; on PostgreSQL a row still locked by a
        write of the stopped work is left to expire rather than waited for."""
        for lease in leases:
            with self._engine.begin() as c:
                if c.dialect.name == "postgresql":
                    locked = sa.select(_L.fence).where(*_held(worker, lease))
                    if c.execute(_locked(locked)).first() is None:
                        continue
                c.execute(
                    sa.update(work_leases)
                    .where(*_held(worker, lease))
                    .values(holder=None, expires_at=None)
                )

    def depart(self, worker: str) -> None:
        with self._engine.begin() as c:
            c.execute(sa.delete(lease_workers).where(_W.worker_id == worker))

    def holders(self, kind: LeaseKind) -> dict[str, str | None]:
        with self._engine.connect() as c:
            rows = c.execute(sa.select(_L.subject, _L.holder).where(_L.kind == kind.value))
            return {str(row.subject): row.holder for row in rows}


def _locked(query: sa.Select[tuple[int]]) -> sa.Select[tuple[int]]:
    """`FOR NO KEY UPDATE SKIP LOCKED`: the lock an UPDATE of the row takes, without waiting."""
    return query.with_for_update(key_share=True, skip_locked=True)


def _held(worker: str, lease: Lease) -> tuple[sa.ColumnElement[bool], ...]:
    return (
        _L.kind == lease.kind.value,
        _L.subject == lease.subject,
        _L.holder == worker,
        _L.fence == lease.fence,
    )
