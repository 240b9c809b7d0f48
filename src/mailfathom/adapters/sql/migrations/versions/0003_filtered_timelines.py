"""Indexes for the filtered timelines a listing reads most: by sender, unread, flagged.

`messages.sender_key` keeps the first From address in comparison form (what a summary shows
as the sender), filled here from `participants` for mail stored before it existed. With it, a
sender's page is read like any folder's: in timeline order from one index range per folder,
stopping when the page is full. Unread and flagged mail get partial indexes over the same
timeline key, so such a page never walks the read or unflagged mail of a folder.

Revision ID: 0003_filtered_timelines
Revises: 0002_read_indexes
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003_filtered_timelines"
down_revision = "0002_read_indexes"
branch_labels = None
depends_on = None

_TIMELINE = ["folder_id", "received_at", "seq"]


def upgrade() -> None:
    op.add_column("messages", sa.Column("sender_key", sa.String(998)))
    op.execute(
        "UPDATE messages SET sender_key = ("
        "SELECT p.address_key FROM participants p "
        "WHERE p.seq = messages.seq AND p.role = 'from' "
        "ORDER BY p.position LIMIT 1)"
    )
    op.create_index("ix_messages_sender_received", "messages", ["sender_key", *_TIMELINE])
    op.create_index(
        "ix_messages_unseen_received",
        "messages",
        _TIMELINE,
        sqlite_where=sa.text("seen = 0"),
        postgresql_where=sa.text("seen = false"),
    )
    op.create_index(
        "ix_messages_flagged_received",
        "messages",
        _TIMELINE,
        sqlite_where=sa.text("flagged = 1"),
        postgresql_where=sa.text("flagged = true"),
    )


def downgrade() -> None:
    op.drop_index("ix_messages_flagged_received", table_name="messages")
    op.drop_index("ix_messages_unseen_received", table_name="messages")
    op.drop_index("ix_messages_sender_received", table_name="messages")
    # Not a batch operation: on SQLite that copies `messages` into a new table and drops the
    # old one, and the drop would cascade into every table that refers to it. SQLite drops
    # a column in place since 3.35.
    op.execute("ALTER TABLE messages DROP COLUMN sender_key")
