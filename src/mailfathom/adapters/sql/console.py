"""The console's store on SQLite and PostgreSQL: `ConsoleStore` (owner password, sessions,
sign-in tries counted) and `OverviewReader` (the counts on the overview page).

A try is counted, for each bound, by one insert that yields to a racing one and one UPDATE
that adds one only where the row's count and last try say a try is due now (the wait of
`domain.console.wait_after`, written out as one condition per count): the check and the
count are the same statement, so tries racing through one moment are counted one after
another, and once a bound is reached the rest find their row no longer due. Both bounds
are counted in one transaction, always in the order given (the same for every caller, so
two tries never wait on each other's rows crosswise); a bound not due undoes the whole."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa

from mailfathom.adapters.sql.owner_alerts import waiting_alerts
from mailfathom.adapters.sql.schema import (
    console_login_failures,
    console_owner,
    console_sessions,
    folder_creations,
    mutation_records,
    outgoing_emails,
    owner_alerts,
)
from mailfathom.adapters.sql.store_base import SqlTables
from mailfathom.app.console.ports import (
    ConsoleSession,
    LoginFailures,
    OutboxState,
    OverviewCounts,
)
from mailfathom.domain.console import wait_after
from mailfathom.domain.mutations import OPEN_STATES, MutationState
from mailfathom.domain.outgoing import Stage

_S = console_sessions.c
_F = console_login_failures.c
_OWNER = 1


def _session(row: sa.Row[Any]) -> ConsoleSession:
    return ConsoleSession(
        token_hash=row.token_hash,
        csrf_secret=row.csrf_secret,
        signed_in=bool(row.signed_in),
        created_at=row.created_at,
        expires_at=row.expires_at,
    )


class SqlConsoleStore(SqlTables):
    def owner_password_hash(self) -> str | None:
        with self.engine.connect() as c:
            found = c.execute(
                sa.select(console_owner.c.password_hash).where(console_owner.c.owner_id == _OWNER)
            ).scalar()
        return None if found is None else str(found)

    def set_owner_password(self, password_hash: str, at: datetime) -> None:
        with self.engine.begin() as c:
            c.execute(sa.delete(console_owner))
            c.execute(
                sa.insert(console_owner).values(
                    owner_id=_OWNER, password_hash=password_hash, set_at=at
                )
            )
            c.execute(sa.delete(console_sessions))

    def open_session(
        self, session: ConsoleSession, now: datetime, *, forms_kept: int | None = None
    ) -> None:
        with self.engine.begin() as c:
            c.execute(sa.delete(console_sessions).where(_S.expires_at <= now))
            if forms_kept is not None:
                others = sa.and_(_S.signed_in.is_(False), _S.token_hash != session.token_hash)
                newest = (
                    sa.select(_S.token_hash)
                    .where(others)
                    .order_by(_S.created_at.desc(), _S.token_hash)
                    .limit(max(forms_kept - 1, 0))
                )
                c.execute(sa.delete(console_sessions).where(others, _S.token_hash.not_in(newest)))
            c.execute(
                sa.insert(console_sessions).values(
                    token_hash=session.token_hash,
                    csrf_secret=session.csrf_secret,
                    signed_in=session.signed_in,
                    created_at=session.created_at,
                    expires_at=session.expires_at,
                )
            )

    def find_session(self, token_hash: str, now: datetime) -> ConsoleSession | None:
        with self.engine.connect() as c:
            row = c.execute(
                sa.select(console_sessions).where(_S.token_hash == token_hash, _S.expires_at > now)
            ).first()
        return None if row is None else _session(row)

    def end_session(self, token_hash: str) -> bool:
        with self.engine.begin() as c:
            ended = c.execute(sa.delete(console_sessions).where(_S.token_hash == token_hash))
        return ended.rowcount == 1

    def failures(self, client: str) -> LoginFailures | None:
        with self.engine.connect() as c:
            row = c.execute(
                sa.select(_F.failures, _F.last_failed_at).where(_F.client == client)
            ).first()
        return None if row is None else LoginFailures(int(row.failures), row.last_failed_at)

    def count_try(self, bounds: Sequence[tuple[str, int]], at: datetime) -> int:
        first = self._insert(console_login_failures).on_conflict_do_nothing(
            index_elements=["client"]
        )
        with self.engine.connect() as c, c.begin() as transaction:
            for client, free in bounds:
                c.execute(first.values(client=client, failures=0, last_failed_at=at))
                counted = c.execute(
                    sa.update(console_login_failures)
                    .where(_F.client == client, _due(free, at))
                    .values(failures=_F.failures + 1, last_failed_at=at)
                )
                if counted.rowcount != 1:
                    transaction.rollback()
                    break
            else:
                return 0
        return max(1, self._wait(bounds, at))

    def _wait(self, bounds: Sequence[tuple[str, int]], at: datetime) -> int:
        left = 0.0
        for client, free in bounds:
            failures = self.failures(client)
            if failures is not None:
                due = failures.last_failed_at + timedelta(seconds=wait_after(failures.count, free))
                left = max(left, (due - at).total_seconds())
        return int(left) + (1 if left > int(left) else 0)

    def forget_failures(self, client: str) -> None:
        with self.engine.begin() as c:
            c.execute(sa.delete(console_login_failures).where(_F.client == client))


_LONGEST_DOUBLING = 17


def _due(free: int, at: datetime) -> sa.ColumnElement[bool]:
    """Whether the row's last try was long enough before `at` for one more: the wait
    `wait_after` gives after the row's count, one term per count it can tell apart."""
    terms: list[sa.ColumnElement[bool]] = [_F.failures < free]
    for count in range(free, free + _LONGEST_DOUBLING):
        since = at - timedelta(seconds=wait_after(count, free))
        terms.append(sa.and_(_F.failures == count, _F.last_failed_at <= since))
    beyond = free + _LONGEST_DOUBLING
    since = at - timedelta(seconds=wait_after(beyond, free))
    terms.append(sa.and_(_F.failures >= beyond, _F.last_failed_at <= since))
    return sa.or_(*terms)


_STAGES = {
    Stage.QUEUED: OutboxState.QUEUED,
    Stage.SENDING: OutboxState.SENDING,
    Stage.SENT: OutboxState.SENT,
    Stage.FAILED: OutboxState.REFUSED,
    Stage.CANCELLED: OutboxState.CANCELLED,
}


class SqlConsoleOverview(SqlTables):
    """The counts of the console's overview, from the tables `mfctl alerts`, `mfctl outbox`
    and `mfctl mutations` read (message changes and folder creations alike)."""

    def counts(self, now: datetime) -> OverviewCounts:
        out = outgoing_emails.c
        held = sa.and_(out.stage == Stage.QUEUED.value, out.send_after > now)
        with self.engine.connect() as c:
            alerts = c.execute(
                sa.select(sa.func.count())
                .select_from(owner_alerts)
                .where(waiting_alerts(c.dialect.name))
            ).scalar_one()
            outbox = dict.fromkeys(OutboxState, 0)
            for stage, is_held, count in c.execute(
                sa.select(out.stage, held, sa.func.count()).group_by(out.stage, held)
            ):
                state = OutboxState.HELD if is_held else _STAGES[Stage(stage)]
                outbox[state] += int(count)
            # Message changes and folder creations, as the mailbox-changes page lists both.
            mutations: Counter[str] = Counter()
            for table in (mutation_records, folder_creations):
                for state, count in c.execute(
                    sa.select(table.c.state, sa.func.count()).group_by(table.c.state)
                ):
                    mutations[str(state)] += int(count)
        return OverviewCounts(
            alerts_waiting=int(alerts),
            outbox=outbox,
            mutations_pending=sum(mutations[s.value] for s in OPEN_STATES),
            mutations_dead_lettered=mutations[MutationState.DEAD_LETTERED.value],
        )
