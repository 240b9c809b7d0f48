"""`AccountHealthStore`: the states that hold accounts back, kept in `account_health`."""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa

from mailfathom.adapters.sql.schema import account_health
from mailfathom.domain.account_health import AccountHealth, HealthState
from mailfathom.domain.errors import ConsentRequired, MailServerAuthError


class SqlAccountHealth:
    """Every connection that logs in with an account's grant reports here, so a healthy
    account costs one read per login and writes nothing. A state is cleared by a login in
    any process, whichever recorded it: that one may have been a command that has ended."""

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
        with self.engine.connect() as c:
            if c.execute(sa.select(account_health.c.account_id).where(held)).first() is None:
                return
        with self.engine.begin() as c:
            c.execute(sa.delete(account_health).where(held))

    def states(self) -> list[AccountHealth]:
        with self.engine.connect() as c:
            rows = c.execute(sa.select(account_health).order_by(account_health.c.account_id))
            return [
                AccountHealth(row.account_id, HealthState(row.state), int(row.code), row.since)
                for row in rows
            ]
