"""Indexes the read side needs.

A timeline page of a folder is a range of (folder_id, received_at, seq): with this index the
page is read in order from the index alone and stops once it is full, however large the
folder. A page over several folders reads each folder's range (PostgreSQL) or sorts the index
entries of the scope (SQLite) without touching the table.

Revision ID: 0002_read_indexes
Revises: 0001_initial_store
"""

from __future__ import annotations

from alembic import op

revision = "0002_read_indexes"
down_revision = "0001_initial_store"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_messages_folder_received", "messages", ["folder_id", "received_at", "seq"])


def downgrade() -> None:
    op.drop_index("ix_messages_folder_received", table_name="messages")
