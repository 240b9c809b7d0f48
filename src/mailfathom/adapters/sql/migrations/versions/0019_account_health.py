"""What keeps an account from synchronizing or sending until a person acts.

Revision ID: 0019_account_health
Revises: 0018_message_trust

One row per account in such a state: `state` names it (`consent_required`: the provider
refused the refresh token the account logs in with), `code` is the error code an operator
sees for it, `since` when it was first seen. A healthy account has no row; going below this
revision forgets the states, which the next login finds again.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0019_account_health"
down_revision = "0018_message_trust"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "account_health",
        sa.Column("account_id", sa.String(64), primary_key=True),
        sa.Column("state", sa.String(32), nullable=False),
        sa.Column("code", sa.Integer, nullable=False),
        sa.Column("since", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("account_health")
