"""The outbox: sends a caller asked for, their recipients, and the composed messages.

Revision ID: 0004_outbox
Revises: 0003_filtered_timelines
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004_outbox"
down_revision = "0003_filtered_timelines"
branch_labels = None
depends_on = None

_TS = sa.DateTime(timezone=True)
_BIGINT = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "outgoing_emails",
        sa.Column("seq", _BIGINT, primary_key=True, autoincrement=True),
        sa.Column("outgoing_id", sa.Uuid, nullable=False, unique=True),
        sa.Column("account_id", sa.String(64), nullable=False),
        sa.Column("idempotency_key", sa.String(128), nullable=False),
        sa.Column("caller", sa.String(64), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("stage", sa.String(16), nullable=False),
        sa.Column("queued_at", _TS, nullable=False),
        sa.Column("not_before", _TS, nullable=False),
        sa.Column("attempt_count", sa.Integer, nullable=False),
        sa.Column("lease_owner", sa.String(64)),
        sa.Column("lease_expires_at", _TS),
        sa.Column("transmission_started_at", _TS),
        sa.Column("failure_code", sa.Integer),
        sa.Column("finished_at", _TS),
        sa.Column("message_id_header", sa.String(998), nullable=False),
        sa.Column("envelope_from", sa.String(998), nullable=False),
        sa.Column("mime", sa.LargeBinary, nullable=False),
        sa.UniqueConstraint("account_id", "idempotency_key", name="uq_outgoing_account_key"),
    )
    op.create_index("ix_outgoing_due", "outgoing_emails", ["stage", "not_before"])
    op.create_index("ix_outgoing_queued", "outgoing_emails", ["queued_at"])
    op.create_table(
        "outgoing_recipients",
        sa.Column(
            "outgoing_seq",
            _BIGINT,
            sa.ForeignKey("outgoing_emails.seq", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("field", sa.String(3), nullable=False),
        sa.Column("address", sa.String(998), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("last_reply_code", sa.Integer),
        sa.PrimaryKeyConstraint("outgoing_seq", "position", name="pk_outgoing_recipients"),
    )


def downgrade() -> None:
    op.drop_table("outgoing_recipients")
    op.drop_index("ix_outgoing_queued", table_name="outgoing_emails")
    op.drop_index("ix_outgoing_due", table_name="outgoing_emails")
    op.drop_table("outgoing_emails")
