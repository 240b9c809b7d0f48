"""`AccountHealthStore`: the states that hold accounts back, kept in `account_health`, and
the warnings that hold nothing back, kept in `account_warnings`."""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa

from mailfathom.adapters.sql.schema import account_health, account_warnings
from mailfathom.domain.account_health import (
    REFRESH_TOKEN_UNSAVED,
    AccountHealth,
    AccountWarning,
    HealthState,
    WarningState,
)
from mailfathom.domain.errors import ConsentRequired, MailServerAuthError


class SqlAccountHealth:
    """Every connection that logs in with an account's grant reports here, so a healthy
    account costs one read per login and writes nothing. A state is cleared by a login in
    any process, whichever recorded it: that one may have been a command that has ended.
    A warning is kept beside a state, and no login clears it: only what it warns of ending
    does."""

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine

    def consent_required(self, account_id: str, at: datetime) -> None:
        self._record(account_id, HealthState.CONSENT_REQUIRED, ConsentRequired.code, at)

    def credentials_refused(self, account_id: str, at: datetime) -> None:
        self._record(account_id, HealthState.CREDENTIALS_REFUSED, MailServerAuthError.code, at)

    def _record(self, account_id: str, state: HealthState, code: int, at: datetime) -> None:
        row = {"account_id": account_id, "state": state.value, "code": code, "since": at}
        try:
            with self.engine.begin() as c:
                found = c.execute(
                    sa.select(account_health.c.state).where(
                        account_health.c.account_id == account_id
                    )
                ).scalar()
                if found == row["state"]:
                    return
                if found is not None:
                    c.execute(
                        sa.update(account_health)
                        .where(account_health.c.account_id == account_id)
                        .values(row)
                    )
                    return
                c.execute(sa.insert(account_health).values(row))
        except sa.exc.IntegrityError:
            return  # another process recorded it first

    def restored(self, account_id: str, only: HealthState | None = None) -> None:
        held = account_health.c.account_id == account_id
        if only is not None:
            held = held & (account_health.c.state == only.value)
        _clear(self.engine, account_health, held)

    def states(self) -> list[AccountHealth]:
        with self.engine.connect() as c:
            rows = c.execute(sa.select(account_health).order_by(account_health.c.account_id))
            return [
                AccountHealth(row.account_id, HealthState(row.state), int(row.code), row.since)
                for row in rows
            ]

    def refresh_token_unsaved(self, account_id: str, at: datetime) -> None:
        warning = WarningState.REFRESH_TOKEN_UNSAVED
        try:
            with self.engine.begin() as c:
                found = sa.select(account_warnings.c.code).where(_warned(account_id, warning))
                if c.execute(found).first() is not None:
                    return
                c.execute(
                    sa.insert(account_warnings).values(
                        account_id=account_id,
                        warning=warning.value,
                        code=REFRESH_TOKEN_UNSAVED,
                        since=at,
                    )
                )
        except sa.exc.IntegrityError:
            return  # another process recorded it first

    def refresh_token_saved(self, account_id: str) -> None:
        warned = _warned(account_id, WarningState.REFRESH_TOKEN_UNSAVED)
        _clear(self.engine, account_warnings, warned)

    def warnings(self) -> list[AccountWarning]:
        with self.engine.connect() as c:
            rows = c.execute(
                sa.select(account_warnings).order_by(
                    account_warnings.c.account_id, account_warnings.c.warning
                )
            )
            return [
                AccountWarning(row.account_id, WarningState(row.warning), int(row.code), row.since)
                for row in rows
            ]


def _warned(account_id: str, warning: WarningState) -> sa.ColumnElement[bool]:
    return (account_warnings.c.account_id == account_id) & (
        account_warnings.c.warning == warning.value
    )


def _clear(engine: sa.Engine, table: sa.Table, where: sa.ColumnElement[bool]) -> None:
    """Delete the rows `where` finds, once a read found one: a healthy account costs one
    read and no write."""
    with engine.connect() as c:
        if c.execute(sa.select(table.c.account_id).where(where)).first() is None:
            return
    with engine.begin() as c:
        c.execute(sa.delete(table).where(where))
