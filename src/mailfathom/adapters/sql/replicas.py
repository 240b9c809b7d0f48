"""`SharedSessions` and `SharedQuestions` on SQLite and PostgreSQL.

A bound is counted and the place taken in one transaction; on PostgreSQL that transaction
first takes an advisory lock named after the caller entry, so replicas opening for the same
caller queue there while other callers pass (SQLite serializes every writer anyway). Rows
past their life are deleted by whichever transaction comes by, skipping rows another one
holds, so two replicas clearing at once never wait on each other."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from mailfathom.adapters.sql.schema import mcp_answers, mcp_questions_waiting, mcp_sessions
from mailfathom.adapters.sql.store_base import SqlTables
from mailfathom.app.shared.replica_ports import StoredSession

_S = mcp_sessions.c
_Q = mcp_questions_waiting.c
_A = mcp_answers.c


def _delete_unheld(table: sa.Table, key: sa.ColumnElement[Any], *where: Any) -> sa.Delete:
    """Delete the rows `where` selects, but none another transaction holds (PostgreSQL;
    SQLite has one writer at a time)."""
    held = sa.select(key).where(*where).with_for_update(skip_locked=True)
    return sa.delete(table).where(key.in_(held.scalar_subquery()))


def _lock_caller(c: sa.Connection, space: str, caller: str) -> None:
    if c.dialect.name == "postgresql":
        c.execute(
            sa.text("SELECT pg_advisory_xact_lock(hashtext(:name))"),
            {"name": f"mailfathom {space} {caller}"},
        )


class SqlSharedSessions(SqlTables):
    def reserve(
        self, reservation: str, caller: str, at: datetime, live_since: datetime, most: int
    ) -> bool:
        with self.engine.begin() as c:
            _lock_caller(c, "sessions", caller)
            c.execute(_delete_unheld(mcp_sessions, _S.reservation, _S.last_used <= live_since))
            held = c.execute(
                sa.select(sa.func.count()).select_from(mcp_sessions).where(_S.caller == caller)
            ).scalar_one()
            if held >= most:
                return False
            c.execute(
                sa.insert(mcp_sessions).values(reservation=reservation, caller=caller, last_used=at)
            )
        return True

    def describe(
        self,
        reservation: str,
        session_id: str,
        principal: str | None,
        protocol_version: str,
        client_params: str,
        at: datetime,
    ) -> None:
        with self.engine.begin() as c:
            c.execute(
                sa.update(mcp_sessions)
                .where(_S.reservation == reservation)
                .values(
                    session_id=session_id,
                    principal=principal,
                    protocol_version=protocol_version,
                    client_params=client_params,
                    last_used=at,
                )
            )

    def release(self, reservation: str) -> None:
        with self.engine.begin() as c:
            c.execute(sa.delete(mcp_sessions).where(_S.reservation == reservation))

    def close(self, session_id: str) -> None:
        with self.engine.begin() as c:
            c.execute(sa.delete(mcp_sessions).where(_S.session_id == session_id))

    def find(self, session_id: str, live_since: datetime) -> StoredSession | None:
        with self.engine.connect() as c:
            row = c.execute(
                sa.select(mcp_sessions).where(
                    _S.session_id == session_id,
                    _S.last_used > live_since,
                    _S.protocol_version.is_not(None),
                )
            ).first()
        return None if row is None else _session(row)

    def touch(self, session_ids: Sequence[str], at: datetime) -> None:
        if not session_ids:
            return
        with self.engine.begin() as c:
            c.execute(
                sa.update(mcp_sessions)
                .where(_S.session_id.in_(list(session_ids)), _S.last_used < at)
                .values(last_used=at)
            )

    def first_used(self, caller: str, live_since: datetime) -> datetime | None:
        with self.engine.connect() as c:
            found: datetime | None = c.execute(
                sa.select(sa.func.min(_S.last_used)).where(
                    _S.caller == caller, _S.last_used > live_since
                )
            ).scalar_one()
        return found


def _session(row: sa.Row[Any]) -> StoredSession:
    return StoredSession(
        session_id=row.session_id,
        caller=row.caller,
        principal=row.principal,
        protocol_version=row.protocol_version,
        client_params=row.client_params,
        last_used=row.last_used,
    )


class SqlSharedQuestions(SqlTables):
    def hold(
        self,
        question_id: str,
        caller: str,
        session_id: str,
        replica: str,
        at: datetime,
        live_since: datetime,
        most: int,
    ) -> bool:
        with self.engine.begin() as c:
            _lock_caller(c, "questions", caller)
            c.execute(
                _delete_unheld(mcp_questions_waiting, _Q.question_id, _Q.asked_at <= live_since)
            )
            if self._waiting(c, caller, live_since) >= most:
                return False
            c.execute(
                sa.insert(mcp_questions_waiting).values(
                    question_id=question_id,
                    caller=caller,
                    session_id=session_id,
                    replica=replica,
                    asked_at=at,
                )
            )
        return True

    def release(self, question_id: str) -> None:
        with self.engine.begin() as c:
            c.execute(sa.delete(mcp_questions_waiting).where(_Q.question_id == question_id))

    def waiting(self, caller: str, live_since: datetime) -> int:
        with self.engine.connect() as c:
            return self._waiting(c, caller, live_since)

    @staticmethod
    def _waiting(c: sa.Connection, caller: str, live_since: datetime) -> int:
        count: int = c.execute(
            sa.select(sa.func.count())
            .select_from(mcp_questions_waiting)
            .where(_Q.caller == caller, _Q.asked_at > live_since)
        ).scalar_one()
        return count

    def route(self, session_id: str, body: str, at: datetime, live_since: datetime) -> int:
        with self.engine.begin() as c:
            c.execute(_delete_unheld(mcp_answers, _A.answer_id, _A.arrived_at <= live_since))
            replicas = (
                c.execute(
                    sa.select(_Q.replica)
                    .distinct()
                    .where(_Q.session_id == session_id, _Q.asked_at > live_since)
                )
                .scalars()
                .all()
            )
            for replica in replicas:
                c.execute(
                    sa.insert(mcp_answers).values(
                        replica=replica, session_id=session_id, body=body, arrived_at=at
                    )
                )
        return len(replicas)

    def collect(self, replica: str) -> list[tuple[str, str]]:
        with self.engine.begin() as c:
            rows = c.execute(
                _delete_unheld(mcp_answers, _A.answer_id, _A.replica == replica).returning(
                    _A.answer_id, _A.session_id, _A.body
                )
            ).all()
        return [(r.session_id, r.body) for r in sorted(rows, key=lambda r: r.answer_id)]
