"""What an operator should mend on an account that is not held.

Revision ID: 0037_account_warnings
Revises: 0036_search_versions

One row per account and warning: `warning` names it (`refresh_token_unsaved`: a refresh token
the provider issued could not be written to the account's file, and is kept in memory only),
`code` is the code an operator sees for it, `since` when it was first seen. Unlike
`account_health` (0019), a warning holds nothing back, and an account may have one beside a
state that holds it. Going below this revision forgets the warnings, which the next failed
write records again.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0037_account_warnings"
down_revision = "0036_search_versions"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "account_warnings",
        sa.Column("account_id", sa.String(64), primary_key=True),
        sa.Column("warning", sa.String(32), primary_key=True),
        sa.Column("code", sa.Integer, nullable=False),
        sa.Column("since", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("account_warnings")
