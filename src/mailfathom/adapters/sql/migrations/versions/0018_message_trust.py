"""What synchronization established about each message's sender and text.

Revision ID: 0018_message_trust
Revises: 0017_contact_statistics

One row per message (`seq`, removed with the message): the sender verdict with its evidence
and the machine-authorship reading. A message with no row was stored before anything was
verified or assessed, which is how mail stored before this revision reads until
`mfctl mailbox reverify` reaches it; `trust_positions` is where that command resumes.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0018_message_trust"
down_revision = "0017_contact_statistics"
branch_labels = None
depends_on = None

_TS = sa.DateTime(timezone=True)
_BIGINT = sa.BigInteger().with_variant(sa.Integer, "sqlite")


def upgrade() -> None:
    op.create_table(
        "message_trust",
        sa.Column(
            "seq",
            _BIGINT,
            sa.ForeignKey("messages.seq", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("author_authentication", sa.String(16)),
        sa.Column("verdict_source", sa.String(24)),
        sa.Column("authenticated_domain", sa.Text),
        sa.Column("displayed_author_domain", sa.Text),
        sa.Column("authenticated_by", sa.String(8)),
        sa.Column("dmarc", sa.String(16)),
        sa.Column("authorship_state", sa.String(16)),
        sa.Column("likelihood", sa.Float),
        sa.Column("signals", sa.Text),
        sa.Column("profile_revision", sa.String(64)),
    )
    op.create_table(
        "trust_positions",
        sa.Column("account_id", sa.String(64), primary_key=True),
        sa.Column("after_seq", _BIGINT, nullable=False),
        sa.Column("updated_at", _TS, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("trust_positions")
    op.drop_table("message_trust")
