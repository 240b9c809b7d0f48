"""An index for the sent-time filters: the messages of a folder by their Date header's time.

A timeline is read in received order, so a page filtered by sent time walks the received
index until enough rows pass; when the sent window lies far back in the timeline, that walk
covers most of the folder (PostgreSQL scanned the whole table once per folder). With this
index a narrow sent window is read as a range and only its rows are sorted.

Revision ID: 0005_sent_time_index
Revises: 0004_outbox
"""

from __future__ import annotations

from alembic import op

revision = "0005_sent_time_index"
down_revision = "0004_outbox"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_messages_folder_sent", "messages", ["folder_id", "sent_at"])


def downgrade() -> None:
    op.drop_index("ix_messages_folder_sent", table_name="messages")
