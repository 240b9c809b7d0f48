"""Drafts: the message of each draft's current revision, its recipients, and its mailbox copies.

Revision ID: 0006_drafts
Revises: 0005_sent_time_index
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006_drafts"
down_revision = "0005_sent_time_index"
branch_labels = None
depends_on = None

_TS = sa.DateTime(timezone=True)
_BIGINT = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "drafts",
        sa.Column("seq", _BIGINT, primary_key=True, autoincrement=True),
        sa.Column("draft_id", sa.Uuid, nullable=False, unique=True),
        sa.Column("account_id", sa.String(64), nullable=False),
        sa.Column("caller", sa.String(64), nullable=False),
        sa.Column("answering", sa.String(16)),
        sa.Column("answered_email_id", sa.Uuid),
        sa.Column("revision", sa.Integer, nullable=False),
        sa.Column("message_id_header", sa.String(998), nullable=False),
        sa.Column("mime", sa.LargeBinary, nullable=False),
        sa.Column("body_characters", sa.Integer, nullable=False),
        sa.Column("saved_at", _TS, nullable=False),
        sa.Column("life", sa.String(16), nullable=False),
        sa.Column("outgoing_id", sa.Uuid),
        sa.Column("retry_key", sa.String(64)),
        sa.Column("filing_until", _TS),
        sa.UniqueConstraint("retry_key", name="uq_drafts_retry_key"),
    )
    op.create_index("ix_drafts_account_life", "drafts", ["account_id", "life"])
    op.create_index("ix_drafts_outgoing", "drafts", ["outgoing_id"])
    op.create_table(
        "draft_recipients",
        sa.Column(
            "draft_seq", _BIGINT, sa.ForeignKey("drafts.seq", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("field", sa.String(3), nullable=False),
        sa.Column("address", sa.String(998), nullable=False),
        sa.Column("written", sa.Boolean, nullable=False),
        sa.PrimaryKeyConstraint("draft_seq", "position", name="pk_draft_recipients"),
    )
    op.create_table(
        "draft_copies",
        sa.Column(
            "draft_seq", _BIGINT, sa.ForeignKey("drafts.seq", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("revision", sa.Integer, nullable=False),
        sa.Column("folder", sa.String(1024), nullable=False),
        sa.Column("uidvalidity", sa.BigInteger, nullable=False),
        sa.Column("uid", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint("draft_seq", "revision", name="pk_draft_copies"),
    )


def downgrade() -> None:
    op.drop_table("draft_copies")
    op.drop_table("draft_recipients")
    op.drop_index("ix_drafts_outgoing", table_name="drafts")
    op.drop_index("ix_drafts_account_life", table_name="drafts")
    op.drop_table("drafts")
