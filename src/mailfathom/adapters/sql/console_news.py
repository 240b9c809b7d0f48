"""The console's live pages' mark of the store (`NewsMarks`): counts and latest instants of
the tables the overview, the drafts waiting, the outbox and the mailbox changes (message
changes and folder creations) read, in one transaction. A draft's edit moves its
`saved_at`, so a draft changed under an open page is news too."""

from __future__ import annotations

from collections.abc import Hashable
from datetime import datetime

import sqlalchemy as sa

from mailfathom.adapters.sql.schema import (
    drafts,
    folder_creations,
    mutation_records,
    outgoing_emails,
    owner_alerts,
)
from mailfathom.adapters.sql.store_base import SqlTables
from mailfathom.domain.outgoing import Stage


def _states(c: sa.Connection, table: sa.Table) -> tuple[tuple[object, ...], ...]:
    """How many records of the table stand in each state, and the latest change to one."""
    query = (
        sa.select(table.c.state, sa.func.count(), sa.func.max(table.c.updated_at))
        .group_by(table.c.state)
        .order_by(table.c.state)
    )
    return tuple(tuple(row) for row in c.execute(query))


class SqlConsoleNews(SqlTables):
    def mark(self, now: datetime) -> Hashable:
        alerts = owner_alerts.c
        out = outgoing_emails.c
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
            # Message changes and folder creations, as the mailbox-changes page lists both.
            changes = tuple(_states(c, t) for t in (mutation_records, folder_creations))
            kept = c.execute(sa.select(sa.func.count(), sa.func.max(drafts.c.saved_at))).one()
        return (
            tuple(alert_mark),
            tuple(map(tuple, stages)),
            changes,
            tuple(kept),
        )
