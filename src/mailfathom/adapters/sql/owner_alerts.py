"""Owner alerts on SQLite and PostgreSQL: `OwnerAlerts`.

An alert waits while it is undismissed and its draft is live. The drafts store dismisses it in
the transaction that takes the draft out of life (`dismiss_with_draft`); the waiting ones are
still read joined with the live drafts, so an alert a store kept from before that (or any other
way its draft went) is never counted nor listed."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from mailfathom.adapters.sql.schema import drafts, owner_alerts
from mailfathom.app.confirmation.ports import OwnerAlert
from mailfathom.domain.drafts import DraftLife

# The texts PostgreSQL reads as a uuid: 32 hex digits, hyphenated or not, braces aside.
_UUID_TEXT = r"^[0-9a-f]{8}-?([0-9a-f]{4}-?){3}[0-9a-f]{12}$"
_A = owner_alerts.c
_D = drafts.c


def _alerted_draft(dialect: str) -> sa.ColumnElement[Any]:
    """The alert's draft identifier as the drafts table holds one, so the join uses the
    drafts' unique index: PostgreSQL reads the text as a uuid, SQLite holds its 32 hex
    digits. Text that is no uuid (the column takes any) names no draft: PostgreSQL would
    refuse to read it as one, so it is not read as one."""
    if dialect == "postgresql":
        return sa.case(
            (_A.draft_id.regexp_match(_UUID_TEXT, flags="i"), sa.cast(_A.draft_id, sa.Uuid)),
            else_=sa.null(),
        )
    return sa.func.replace(_A.draft_id, "-", "")


def waiting_alerts(dialect: str) -> sa.ColumnElement[bool]:
    """Undismissed alerts whose draft is live."""
    live = sa.exists().where(
        _D.draft_id == _alerted_draft(dialect), _D.life == DraftLife.LIVE.value
    )
    return sa.and_(_A.dismissed_at.is_(None), live)


def dismiss_with_draft(c: sa.Connection, draft_id: uuid.UUID, at: datetime) -> None:
    """Dismiss the alert on `draft_id`, within the transaction that takes the draft out of
    life: nothing is left for the owner to decide."""
    c.execute(
        owner_alerts.update()
        .where(_A.draft_id == str(draft_id), _A.dismissed_at.is_(None))
        .values(dismissed_at=at)
    )


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

    def waiting(self) -> list[OwnerAlert]:
        query = (
            sa.select(owner_alerts)
            .where(waiting_alerts(self._engine.dialect.name))
            .order_by(_A.raised_at.desc(), _A.alert_key)
        )
        with self._engine.connect() as c:
            return [_alert(row) for row in c.execute(query).mappings()]

    def find_waiting(self, key: str) -> OwnerAlert | None:
        query = sa.select(owner_alerts).where(
            _A.alert_key == key, waiting_alerts(self._engine.dialect.name)
        )
        with self._engine.connect() as c:
            row = c.execute(query).mappings().first()
        return None if row is None else _alert(row)

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
