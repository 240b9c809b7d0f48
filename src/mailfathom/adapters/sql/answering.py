"""Answering's records on SQLite and PostgreSQL: `AnsweringLedger` (what each caller spent
per period, in `answering_budget`) and `ChatHealthRecord` (the chat role's row of
`provider_health`).

A run is admitted by one conditional UPDATE (`runs < max and tokens < max`), after the
period's row is made to exist by an insert that yields to a racing one: two processes
admitting at once never count past the ceiling, on either database.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

from mailfathom.adapters.sql.schema import answering_budget, provider_health
from mailfathom.domain.answering import ChatFailure

_B = answering_budget.c
_H = provider_health.c
CHAT_ROLE = "chat"


class SqlAnsweringLedger:
    def __init__(self, engine: sa.Engine) -> None:
        self._engine = engine

    def _insert(self) -> Any:
        dialect = postgresql if self._engine.dialect.name == "postgresql" else sqlite
        return dialect.insert(answering_budget).on_conflict_do_nothing(
            index_elements=["caller", "period_start"]
        )

    def admit(self, caller: str, period_start: datetime, *, max_runs: int, max_tokens: int) -> bool:
        with self._engine.begin() as c:
            c.execute(sa.delete(answering_budget).where(_B.period_start < period_start))
            c.execute(
                self._insert().values(caller=caller, period_start=period_start, runs=0, tokens=0)
            )
            counted = c.execute(
                sa.update(answering_budget)
                .where(
                    _B.caller == caller,
                    _B.period_start == period_start,
                    _B.runs < max_runs,
                    _B.tokens < max_tokens,
                )
                .values(runs=_B.runs + 1)
            )
            return counted.rowcount == 1

    def spend(self, caller: str, period_start: datetime, tokens: int) -> int:
        this = (_B.caller == caller) & (_B.period_start == period_start)
        with self._engine.begin() as c:
            c.execute(
                self._insert().values(caller=caller, period_start=period_start, runs=0, tokens=0)
            )
            c.execute(sa.update(answering_budget).where(this).values(tokens=_B.tokens + tokens))
            return int(c.execute(sa.select(_B.tokens).where(this)).scalar_one())

    def spent(self, period_start: datetime) -> list[tuple[str, int, int]]:
        """(caller, runs, tokens) of every caller in the period, by caller (`mfctl`)."""
        with self._engine.connect() as c:
            rows = c.execute(
                sa.select(_B.caller, _B.runs, _B.tokens)
                .where(_B.period_start == period_start)
                .order_by(_B.caller)
            )
            return [(row.caller, int(row.runs), int(row.tokens)) for row in rows]


class SqlChatHealth:
    """The chat role's health: a row while the latest question ended in a provider failure,
    none once the endpoint answered. A repeated failure keeps the first time it was seen."""

    def __init__(self, engine: sa.Engine) -> None:
        self._engine = engine

    def failed(self, failure: ChatFailure, at: datetime) -> None:
        row = {"role": CHAT_ROLE, "state": failure.value, "code": failure.code, "since": at}
        held = _H.role == CHAT_ROLE
        try:
            with self._engine.begin() as c:
                found = c.execute(sa.select(_H.state).where(held)).scalar()
                if found == failure.value:
                    return
                if found is not None:
                    c.execute(sa.update(provider_health).where(held).values(row))
                    return
                c.execute(sa.insert(provider_health).values(row))
        except sa.exc.IntegrityError:
            return  # another process recorded it first

    def answered(self) -> None:
        held = _H.role == CHAT_ROLE
        with self._engine.connect() as c:
            if c.execute(sa.select(_H.role).where(held)).first() is None:
                return
        with self._engine.begin() as c:
            c.execute(sa.delete(provider_health).where(held))

    def state(self) -> tuple[ChatFailure, int, datetime] | None:
        """The failure on record, its code and since when; None while healthy."""
        with self._engine.connect() as c:
            row = c.execute(sa.select(provider_health).where(_H.role == CHAT_ROLE)).first()
        if row is None:
            return None
        return ChatFailure(row.state), int(row.code), row.since
