"""`AccountHealthStore`: the states that hold accounts back, kept in `account_health`."""

from __future__ import annotations

import threading
from datetime import datetime

import sqlalchemy as sa

from mailfathom.adapters.sql.schema import account_health
from mailfathom.domain.account_health import AccountHealth, HealthState
from mailfathom.domain.errors import ConsentRequired


class SqlAccountHealth:
    """Every connection that logs in reports here, so a healthy account costs one DELETE
    per process: after it, a successful login writes nothing until this process recorded a
    state for the account again."""

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine
        self._known_healthy: set[str] = set()
        self._lock = threading.Lock()

    def consent_required(self, account_id: str, at: datetime) -> None:
        with self._lock:
            self._known_healthy.discard(account_id)
        row = {
            "account_id": account_id,
            "state": HealthState.CONSENT_REQUIRED.value,
            "code": ConsentRequired.code,
            "since": at,
        }
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

    def restored(self, account_id: str) -> None:
        with self._lock:
            if account_id in self._known_healthy:
                return
        with self.engine.begin() as c:
            c.execute(sa.delete(account_health).where(account_health.c.account_id == account_id))
        with self._lock:
            self._known_healthy.add(account_id)

    def states(self) -> list[AccountHealth]:
        with self.engine.connect() as c:
            rows = c.execute(sa.select(account_health).order_by(account_health.c.account_id))
            return [
                AccountHealth(row.account_id, HealthState(row.state), int(row.code), row.since)
                for row in rows
            ]
