"""Owner alerts on SQLite and PostgreSQL: `OwnerAlerts`."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa

from mailfathom.adapters.sql.schema import owner_alerts
from mailfathom.app.confirmation.ports import OwnerAlert

_A = owner_alerts.c


class SqlOwnerAlerts:
    def __init__(self, engine: sa.Engine) -> None:
        self._engine = engine

    def raise_alert(self, alert: OwnerAlert) -> bool:
        """One alert per key: a second raise of the same alert, even a racing one, leaves the
        first as it stands (the key is the primary key) and answers False."""
        try:
            with self._engine.begin() as c:
                held = c.execute(sa.select(_A.alert_key).where(_A.alert_key == alert.key))
                if held.first() is not None:
                    return False
                c.execute(
                    owner_alerts.insert().values(
                        alert_key=alert.key,
                        account_id=alert.account_id,
                        draft_id=alert.draft_id,
                        reason=alert.reason,
                        raised_at=alert.raised_at,
                        dismissed_at=None,
                    )
                )
            return True
        except sa.exc.IntegrityError:
            with self._engine.connect() as c:
                held = c.execute(sa.select(_A.alert_key).where(_A.alert_key == alert.key))
                if held.first() is None:
                    raise
            return False

    def held_reason(self, key: str) -> str | None:
        with self._engine.connect() as c:
            found = c.execute(sa.select(_A.reason).where(_A.alert_key == key)).first()
            return None if found is None else str(found.reason)

    def listing(self, include_dismissed: bool, limit: int) -> list[OwnerAlert]:
        query = sa.select(owner_alerts).order_by(_A.raised_at.desc(), _A.alert_key).limit(limit)
        if not include_dismissed:
            query = query.where(_A.dismissed_at.is_(None))
        with self._engine.connect() as c:
            return [_alert(row) for row in c.execute(query).mappings()]

    def dismiss(self, key: str, now: datetime) -> bool:
        with self._engine.begin() as c:
            changed = c.execute(
                owner_alerts.update()
                .where(_A.alert_key == key, _A.dismissed_at.is_(None))
                .values(dismissed_at=now)
            )
            return changed.rowcount == 1


def _alert(row: Any) -> OwnerAlert:
    return OwnerAlert(
        key=row["alert_key"],
        account_id=row["account_id"],
        draft_id=row["draft_id"],
        reason=row["reason"],
        raised_at=row["raised_at"],
        dismissed_at=row["dismissed_at"],
    )
