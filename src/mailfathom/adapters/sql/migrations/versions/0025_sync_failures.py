"""The last coded failure of each account's and folder's synchronization.

Revision ID: 0025_sync_failures
Revises: 0024_caller_keys

`sync_failures` holds at most one row per account and folder: the code the last failed pass
stopped on and when; a successful pass deletes it. `folder_id` 0 stands for the account's
pass as a whole (folder identifiers start at 1). No text from a server is kept. Going below
this revision forgets every record; the next failure records it again.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0025_sync_failures"
down_revision = "0024_caller_keys"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "sync_failures",
        sa.Column("account_id", sa.String(64), primary_key=True),
        sa.Column(
            "folder_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), primary_key=True
        ),
        sa.Column("code", sa.Integer, nullable=False),
        sa.Column("failed_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("sync_failures")
