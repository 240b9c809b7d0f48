"""Leases on background work on SQLite and PostgreSQL: `SqlWorkLeases`.

A claim is one transaction: on PostgreSQL the free or expired rows are selected `FOR UPDATE
SKIP LOCKED` (two workers claiming at once take different rows, and a row a fenced write
holds `FOR SHARE` is skipped until that write commits), then taken with a conditional UPDATE
that adds one to the fence. SQLite has one writer at a time (every write transaction begins
IMMEDIATE), so the conditional UPDATE alone decides. Renewal and release name the fence they
were claimed under, so a worker whose lease was taken over changes nothing; a worker's
leases are renewed in one short transaction that skips a row locked by the holder's own open write
instead of waiting for it, so one long write delays no renewal, and however many leases a
worker holds the round costs a few statements.

Expiry and liveness are read against one clock every worker shares (`now`): PostgreSQL's, so
a machine whose clock runs ahead neither sees the others dead nor their leases expired; on
SQLite, one machine's.

Each claim and heartbeat also names the process behind it (`adapters.processes`). A claimant
takes at once, under a new fence, a lease whose holder is a process of its own machine that is
provably gone (killed, crashed, its id reused since), and a heartbeat forgets such a worker:
a restarted `sync` or worker does not wait out its dead predecessor. A holder on another
machine is judged by its lease's expiry alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

from mailfathom.adapters.processes import MachineProcesses
from mailfathom.adapters.sql.schema import lease_workers, work_leases
from mailfathom.adapters.sql.store_clock import store_now
from mailfathom.app.sync.lease_ports import Lease, LeaseKind

_L = work_leases.c
_Row = TypeVar("_Row", bound=tuple[Any, ...])
_W = lease_workers.c
# A worker not seen for this long is forgotten (a heartbeat table does not grow forever).
_FORGET_AFTER = timedelta(hours=1)


def _free(now: datetime) -> sa.ColumnElement[bool]:
    return sa.or_(_L.holder.is_(None), _L.expires_at.is_(None), _L.expires_at <= now)


class SqlWorkLeases:
    def __init__(
        self,
        engine: sa.Engine,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        *,
        machine: MachineProcesses | None = None,
        process: str | None = None,
    ) -> None:
        """`clock`: this machine's, read on SQLite only (where one machine shares the store).
        `machine`: this machine's processes, whose leases are taken once their holder is gone
        (None: by expiry alone); `process`: how the rows name the claiming process (by
        default this one)."""
        self._engine = engine
        self._clock = clock
        self._machine = machine
        self._process = process if process is not None or machine is None else machine.own()

    def now(self) -> datetime:
        return store_now(self._engine, self._clock)

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
            seen = {"seen_until": until, "process": self._process}
            updated = c.execute(
                sa.update(lease_workers).where(_W.worker_id == worker).values(**seen)
            ).rowcount
            if updated == 0:
                c.execute(sa.insert(lease_workers).values(worker_id=worker, **seen))
            c.execute(sa.delete(lease_workers).where(_W.seen_until < now - _FORGET_AFTER))
            gone = self._gone(c, sa.select(_W.process).where(_W.seen_until > now))
            if gone:
                c.execute(sa.delete(lease_workers).where(_W.process.in_(gone)))
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
            ours = (_L.kind == kind.value, _L.subject.in_(subjects))
            gone = self._gone(c, sa.select(_L.holder_process).where(*ours, ~_free(now)))
            takeable = sa.or_(_free(now), _L.holder_process.in_(gone)) if gone else _free(now)
            query = (
                sa.select(_L.subject)
                .where(*ours, takeable)
                .order_by(_L.expires_at.nulls_first(), _L.subject)
                .limit(limit)
            )
            if c.dialect.name == "postgresql":
                query = query.with_for_update(skip_locked=True)
            taken: list[Lease] = []
            for subject in c.execute(query).scalars().all():
                fence = c.execute(
                    sa.update(work_leases)
                    .where(_L.kind == kind.value, _L.subject == subject, takeable)
                    .values(
                        holder=worker,
                        holder_process=self._process,
                        fence=_L.fence + 1,
                        expires_at=until,
                    )
                    .returning(_L.fence)
                ).scalar_one_or_none()
                if fence is not None:
                    taken.append(Lease(kind, subject, int(fence)))
            return taken

    def renew(
        self, worker: str, leases: Sequence[Lease], now: datetime, until: datetime
    ) -> set[str]:
        """Every lease in one short transaction that never waits, so renewal costs a few
        statements however many leases a worker holds. On PostgreSQL the rows are locked
        `FOR NO KEY UPDATE SKIP LOCKED`: a row the holder's own fenced write holds FOR SHARE
        is skipped, not waited for, and counts as kept while it still names this holder and
        fence (the write's commit comes first, and the next round renews it)."""
        if not leases:
            return set()
        with self._engine.begin() as c:
            mine = sa.select(_L.subject).where(_L.holder == worker, _claims(leases))
            if c.dialect.name == "postgresql":
                locked = set(c.execute(_locked(mine)).scalars())
                kept = locked | set(c.execute(mine.where(_L.subject.not_in(locked))).scalars())
            else:
                locked = kept = set(c.execute(mine).scalars())
            if locked:
                c.execute(
                    sa.update(work_leases)
                    .where(_L.holder == worker, _claims(leases), _L.subject.in_(locked))
                    .values(expires_at=until)
                )
            return {str(subject) for subject in kept}

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
                    .values(holder=None, holder_process=None, expires_at=None)
                )

    def depart(self, worker: str) -> None:
        with self._engine.begin() as c:
            c.execute(sa.delete(lease_workers).where(_W.worker_id == worker))

    def holders(self, kind: LeaseKind) -> dict[str, str | None]:
        with self._engine.connect() as c:
            rows = c.execute(sa.select(_L.subject, _L.holder).where(_L.kind == kind.value))
            return {str(row.subject): row.holder for row in rows}

    def held_by_live_worker(self, kind: LeaseKind, subject: str) -> bool:
        """Whether `subject`'s lease is held, unexpired, by a worker whose heartbeat is live:
        a continuous process (`serve`, `sync --continuous`, `worker`), which keeps the work
        going. Work done once (`lease_hold.holding`) holds its lease without a heartbeat."""
        now = self.now()
        with self._engine.connect() as c:
            found = c.execute(
                sa.select(_L.subject)
                .join(lease_workers, _W.worker_id == _L.holder)
                .where(_L.kind == kind.value, _L.subject == subject, ~_free(now))
                .where(_W.seen_until > now)
            ).first()
            return found is not None

    def _gone(self, c: sa.Connection, named: sa.Select[Any]) -> list[str]:
        """The processes `named` selects that are of this machine and provably gone."""
        if self._machine is None:
            return []
        found: list[str | None] = list(c.execute(named.distinct()).scalars())
        return self._machine.gone_among(found)


def _claims(leases: Sequence[Lease]) -> sa.ColumnElement[bool]:
    """The rows of `leases` as claimed: each kind and subject under its fence."""
    return sa.tuple_(_L.kind, _L.subject, _L.fence).in_(
        [(lease.kind.value, lease.subject, lease.fence) for lease in leases]
    )


def _locked(query: sa.Select[_Row]) -> sa.Select[_Row]:
    """`FOR NO KEY UPDATE SKIP LOCKED`: the lock an UPDATE of the row takes, without waiting."""
    return query.with_for_update(key_share=True, skip_locked=True)


def _held(worker: str, lease: Lease) -> tuple[sa.ColumnElement[bool], ...]:
    return (
        _L.kind == lease.kind.value,
        _L.subject == lease.subject,
        _L.holder == worker,
        _L.fence == lease.fence,
    )
