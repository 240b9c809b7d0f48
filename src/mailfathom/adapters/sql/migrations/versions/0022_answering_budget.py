"""What each caller spent answering questions, per period, and the chat role's health.

Revision ID: 0022_answering_budget
Revises: 0021_passage_vectors

`answering_budget` holds one row per caller and period (fixed windows counted from the Unix
epoch): the runs it started and the tokens the chat provider counted, so a restart does not
give a period back. Rows of ended periods are deleted as new ones are written.
`provider_health` holds one row per provider role in a failed state (`chat`): the failure,
its code and since when; a healthy role has no row. Going below this revision forgets both,
which gives every caller its current period back.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0022_answering_budget"
down_revision = "0021_passage_vectors"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "answering_budget",
        sa.Column("caller", sa.String(256), primary_key=True),
        sa.Column("period_start", sa.DateTime(timezone=True), primary_key=True),
        sa.Column("runs", sa.Integer, nullable=False),
        sa.Column("tokens", sa.BigInteger, nullable=False),
    )
    op.create_table(
        "provider_health",
        sa.Column("role", sa.String(32), primary_key=True),
        sa.Column("state", sa.String(32), nullable=False),
        sa.Column("code", sa.Integer, nullable=False),
        sa.Column("since", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("provider_health")
    op.drop_table("answering_budget")
