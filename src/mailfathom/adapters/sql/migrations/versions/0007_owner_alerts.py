"""Owner alerts: drafts waiting because nobody could be asked whether to send them.

Revision ID: 0007_owner_alerts
Revises: 0006_drafts
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007_owner_alerts"
down_revision = "0006_drafts"
branch_labels = None
depends_on = None

_TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "owner_alerts",
        sa.Column("alert_key", sa.String(80), primary_key=True),
        sa.Column("account_id", sa.String(64), nullable=False),
        sa.Column("draft_id", sa.String(128), nullable=False),
        sa.Column("reason", sa.String(32), nullable=False),
        sa.Column("raised_at", _TS, nullable=False),
        sa.Column("dismissed_at", _TS),
    )
    op.create_index("ix_owner_alerts_raised", "owner_alerts", ["raised_at"])


def downgrade() -> None:
    op.drop_index("ix_owner_alerts_raised", table_name="owner_alerts")
    op.drop_table("owner_alerts")
