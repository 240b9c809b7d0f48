"""Draft files: the name and size of each file a draft's current revision carries.

Revision ID: 0008_draft_files
Revises: 0007_owner_alerts
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008_draft_files"
down_revision = "0007_owner_alerts"
branch_labels = None
depends_on = None

_BIGINT = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "draft_files",
        sa.Column(
            "draft_seq", _BIGINT, sa.ForeignKey("drafts.seq", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("file_name", sa.String(255)),
        sa.Column("size_octets", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint("draft_seq", "position", name="pk_draft_files"),
    )


def downgrade() -> None:
    op.drop_table("draft_files")
