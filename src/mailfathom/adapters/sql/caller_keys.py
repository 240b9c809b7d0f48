"""Console keys (`ApiKeyStore`) and recent tool calls (`ToolCallLog`) on SQLite and
PostgreSQL.

A key is found by its identifier (the primary key) and compared by its digest by the use
case, in constant time. Adds and revocations of keys wait for each other, so an entry's
active keys are counted against their bound, and the revoked ones trimmed to theirs, with
no other write between. A call is appended and the log trimmed to its newest rows in one
transaction, by the call identifiers the database hands out in order."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from mailfathom.adapters.sql.schema import console_api_keys, console_tool_calls
from mailfathom.adapters.sql.store_base import SqlTables, serialize_writers
from mailfathom.app.console.access_ports import (
    DuplicateForm,
    IssuedKey,
    ToolCallRecord,
    TooManyKeys,
)

_K = console_api_keys.c
_C = console_tool_calls.c


def _key(row: sa.Row[Any]) -> IssuedKey:
    return IssuedKey(
        key_id=row.key_id,
        caller=row.caller,
        key_sha256=row.key_sha256,
        form_nonce=row.form_nonce,
        created_at=row.created_at,
        revoked_at=row.revoked_at,
    )


class SqlApiKeys(SqlTables):
    def add(self, key: IssuedKey, most: int) -> None:
        statement = self._insert(console_api_keys).on_conflict_do_nothing()
        with self.engine.begin() as c:
            serialize_writers(c, console_api_keys)
            used = c.execute(sa.select(_K.key_id).where(_K.form_nonce == key.form_nonce))
            if used.first() is not None:
                raise DuplicateForm(key.key_id)
            held = c.execute(
                sa.select(sa.func.count())
                .select_from(console_api_keys)
                .where(_K.caller == key.caller, _K.revoked_at.is_(None))
            ).scalar_one()
            if held >= most:
                raise TooManyKeys(key.caller)
            added = c.execute(
                statement.values(
                    key_id=key.key_id,
                    caller=key.caller,
                    key_sha256=key.key_sha256,
                    form_nonce=key.form_nonce,
                    created_at=key.created_at,
                    revoked_at=key.revoked_at,
                ).returning(_K.key_id)
            ).first()
        if added is None:
            raise DuplicateForm(key.key_id)

    def find(self, key_id: str) -> IssuedKey | None:
        with self.engine.connect() as c:
            row = c.execute(sa.select(console_api_keys).where(_K.key_id == key_id)).first()
        return None if row is None else _key(row)

    def active(self) -> list[IssuedKey]:
        with self.engine.connect() as c:
            rows = c.execute(
                sa.select(console_api_keys)
                .where(_K.revoked_at.is_(None))
                .order_by(_K.created_at, _K.key_id)
            ).all()
        return [_key(r) for r in rows]

    def revoke(self, key_id: str, at: datetime, keep_revoked: int) -> bool:
        with self.engine.begin() as c:
            serialize_writers(c, console_api_keys)
            revoked = c.execute(
                sa.update(console_api_keys)
                .where(_K.key_id == key_id, _K.revoked_at.is_(None))
                .values(revoked_at=at)
            )
            if revoked.rowcount != 1:
                return False
            kept = (
                sa.select(_K.key_id)
                .where(_K.revoked_at.is_not(None))
                .order_by(_K.revoked_at.desc(), _K.key_id.desc())
                .limit(keep_revoked)
            )
            c.execute(
                sa.delete(console_api_keys).where(
                    _K.revoked_at.is_not(None), _K.key_id.not_in(kept.scalar_subquery())
                )
            )
        return True


def _call(row: sa.Row[Any]) -> ToolCallRecord:
    return ToolCallRecord(
        at=row.called_at,
        tool=row.tool,
        caller=row.caller,
        outcome=row.outcome,
        code=row.code,
        duration_us=int(row.duration_us),
        call_id=int(row.call_id),
    )


class SqlToolCalls(SqlTables):
    def append(self, calls: Sequence[ToolCallRecord], keep: int) -> None:
        if not calls:
            return
        with self.engine.begin() as c:
            kept = (
                c.execute(
                    sa.insert(console_tool_calls).returning(
                        _C.call_id, sort_by_parameter_order=True
                    ),
                    [
                        {
                            "called_at": call.at,
                            "tool": call.tool,
                            "caller": call.caller,
                            "outcome": call.outcome,
                            "code": call.code,
                            "duration_us": call.duration_us,
                        }
                        for call in calls
                    ],
                )
                .scalars()
                .all()
            )
            # Trimming with every write made each DELETE walk the index over the entries the
            # writes before it had just removed (dead until vacuumed): it runs when the new
            # identities cross a multiple of a tenth of the bound, so the log holds the
            # newest `keep` calls and fewer than a tenth more.
            step = max(1, keep // 10)
            if max(kept) // step != (min(kept) - 1) // step:
                c.execute(sa.delete(console_tool_calls).where(_C.call_id <= max(kept) - keep))

    def newest(
        self,
        limit: int,
        before: int | None = None,
        caller: str | None = None,
        outcome: str | None = None,
    ) -> list[ToolCallRecord]:
        query = sa.select(console_tool_calls).order_by(_C.call_id.desc()).limit(limit)
        if before is not None:
            query = query.where(_C.call_id < before)
        if caller is not None:
            query = query.where(_C.caller == caller)
        if outcome is not None:
            query = query.where(_C.outcome == outcome)
        with self.engine.connect() as c:
            return [_call(r) for r in c.execute(query).all()]

    def callers(self) -> list[str]:
        with self.engine.connect() as c:
            rows = c.execute(
                sa.select(_C.caller).where(_C.caller.is_not(None)).distinct().order_by(_C.caller)
            ).scalars()
            return [str(r) for r in rows]
