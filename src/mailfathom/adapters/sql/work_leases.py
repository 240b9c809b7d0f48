"""Leases on background work on SQLite and PostgreSQL: `SqlWorkLeases`.

A claim is one transaction: on PostgreSQL the free or expired rows are selected `FOR UPDATE
SKIP LOCKED` (two workers claiming at once take different rows, and a row a fenced write
holds `FOR SHARE` is skipped until that write commits), then taken with a conditional UPDATE
that adds one to the fence. SQLite has one writer at a time (every write transaction begins
IMMEDIATE), so the conditional UPDATE alone decides. Renewal and release name the fence they
were claimed under, so a worker whose lease was taken over changes nothing.

Expiry is read against the worker's own clock: the machines sharing the store keep their
clocks within a small part of the lease period of each other.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

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
    def __init__(self, engine: sa.Engine) -> None:
        self._engine = engine

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

    def beat(self, worker: str, now: datetime, until: datetime) -> int:
        with self._engine.begin() as c:
            updated = c.execute(
                sa.update(lease_workers).where(_W.worker_id == worker).values(seen_until=until)
            ).rowcount
            if updated == 0:
                c.execute(sa.insert(lease_workers).values(worker_id=worker, seen_until=until))
            c.execute(sa.delete(lease_workers).where(_W.seen_until < now - _FORGET_AFTER))
            live = c.execute(
                sa.select(sa.func.count()).select_from(lease_workers).where(_W.seen_until > now)
            ).scalar_one()
            return int(live)

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
                .where(sa.or_(_L.holder.is_(None), _L.holder != worker))
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
        kept: set[str] = set()
        with self._engine.begin() as c:
            for lease in leases:
                if c.execute(
                    sa.update(work_leases).where(*_held(worker, lease)).values(expires_at=until)
                ).rowcount:
                    kept.add(lease.subject)
        return kept

    def release(self, worker: str, leases: Sequence[Lease]) -> None:
        with self._engine.begin() as c:
            for lease in leases:
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


def _held(worker: str, lease: Lease) -> tuple[sa.ColumnElement[bool], ...]:
    return (
        _L.kind == lease.kind.value,
        _L.subject == lease.subject,
        _L.holder == worker,
        _L.fence == lease.fence,
    )
