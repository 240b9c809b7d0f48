"""The instant before which a queued send is not offered to the delivery pass.

Revision ID: 0014_send_after
Revises: 0013_folder_creations

The column is what a caller asked for and what is read back; the record's `not_before` is
written no earlier than it, so the claim keeps walking `ix_outgoing_due` and no index of its
own is needed.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014_send_after"
down_revision = "0013_folder_creations"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("outgoing_emails", sa.Column("send_after", sa.DateTime(timezone=True)))


def downgrade() -> None:
    # Not by copying the table: SQLite drops a table being replaced with its foreign keys
    # on, which would delete every send's recipients with it (ON DELETE CASCADE).
    op.drop_column("outgoing_emails", "send_after")
