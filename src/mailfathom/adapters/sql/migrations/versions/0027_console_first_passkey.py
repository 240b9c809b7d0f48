"""The one-time code that lets the console's first passkey be made.

Revision ID: 0027_console_first_passkey
Revises: 0026_console_passkeys

`console_first_passkey` holds at most one row: the SHA-256 of the code
`mailfathom console first-passkey` printed, and when it stops counting. The owner's first
passkey (no password, no passkey yet) is made only with it, and making it deletes it. Going
below this revision forgets an outstanding code: print a new one.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0027_console_first_passkey"
down_revision = "0026_console_passkeys"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "console_first_passkey",
        sa.Column("code_sha256", sa.String(64), primary_key=True),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("console_first_passkey")
