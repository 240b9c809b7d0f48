"""Taking a column off a table other tables point at keeps their rows: on SQLite, a
migration that replaced such a table (as batch operations do) would drop it with its foreign
keys on, deleting every row that points at it. Checked on both stores."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import sqlalchemy as sa

from mailfathom.adapters.sql import migrate
from mailfathom.adapters.sql.schema import outgoing_emails, outgoing_recipients

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def _count(engine: sa.Engine, table: str) -> int:
    with engine.connect() as c:
        return int(c.execute(sa.text(f"SELECT count(*) FROM {table}")).scalar_one())


def test_going_below_the_send_after_column_keeps_every_sends_recipients(
    engine: sa.Engine,
) -> None:
    with engine.begin() as c:
        seq = c.execute(
            sa.insert(outgoing_emails).returning(outgoing_emails.c.seq),
            {
                "outgoing_id": uuid.uuid4(),
                "account_id": "a",
                "idempotency_key": "k",
                "caller": "c",
                "kind": "new",
                "stage": "queued",
                "queued_at": NOW,
                "not_before": NOW,
                "attempt_count": 0,
                "message_id_header": "<m@example.org>",
                "envelope_from": "a@example.org",
                "mime": b"x",
            },
        ).scalar_one()
        c.execute(
            sa.insert(outgoing_recipients),
            {
                "account_id": "a",
                "outgoing_seq": seq,
                "position": 0,
                "field": "to",
                "address": "b@example.org",
                "state": "pending",
            },
        )
    migrate.downgrade(engine, "0013_folder_creations")
    assert _count(engine, "outgoing_recipients") == 1
    migrate.upgrade(engine)
    assert _count(engine, "outgoing_recipients") == 1
