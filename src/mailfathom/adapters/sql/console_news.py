"""The console's live pages' mark of the store (`NewsMarks`): counts and latest instants of
the tables the overview, the drafts waiting, the outbox and the mailbox changes read, in one
transaction. A draft's edit moves its `saved_at`, so a draft changed under an open page is
news too."""

from __future__ import annotations

from collections.abc import Hashable
from datetime import datetime

import sqlalchemy as sa

from mailfathom.adapters.sql.schema import drafts, mutation_records, outgoing_emails, owner_alerts
from mailfathom.adapters.sql.store_base import SqlTables
from mailfathom.domain.outgoing import Stage


class SqlConsoleNews(SqlTables):
    def mark(self, now: datetime) -> Hashable:
        alerts = owner_alerts.c
        out = outgoing_emails.c
        changes = mutation_records.c
        due = sa.and_(out.stage == Stage.QUEUED.value, sa.func.coalesce(out.send_after, now) <= now)
        with self.engine.connect() as c:
            alert_mark = c.execute(
                sa.select(
                    sa.func.count().filter(alerts.dismissed_at.is_(None)),
                    sa.func.count(),
                    sa.func.max(alerts.raised_at),
                    sa.func.max(alerts.dismissed_at),
                )
            ).one()
            stages = c.execute(
                sa.select(
                    out.stage,
                    due,
                    sa.func.count(),
                    sa.func.max(out.seq),
                    sa.func.sum(out.attempt_count),
                )
                .group_by(out.stage, due)
                .order_by(out.stage, due)
            ).all()
            states = c.execute(
                sa.select(changes.state, sa.func.count(), sa.func.max(changes.updated_at))
                .group_by(changes.state)
                .order_by(changes.state)
            ).all()
            kept = c.execute(sa.select(sa.func.count(), sa.func.max(drafts.c.saved_at))).one()
        return (
            tuple(alert_mark),
            tuple(map(tuple, stages)),
            tuple(map(tuple, states)),
            tuple(kept),
        )
