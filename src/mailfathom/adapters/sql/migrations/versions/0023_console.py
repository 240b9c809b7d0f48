"""The owner's console: the owner password, sessions and wrong-password counts.

Revision ID: 0023_console
Revises: 0022_answering_budget

`console_owner` holds at most one row: the argon2id hash of the owner password.
`console_sessions` holds one row per visit, found by the SHA-256 of its cookie's token (the
token itself is never stored), with its CSRF secret and its expiry. `console_login_failures`
counts wrong passwords in a row per client address, and for all clients under `*`. Going
below this revision forgets all three: nobody is signed in and the password must be set
again.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0023_console"
down_revision = "0022_answering_budget"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "console_owner",
        sa.Column("owner_id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("password_hash", sa.String(512), nullable=False),
        sa.Column("set_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "console_sessions",
        sa.Column("token_hash", sa.String(64), primary_key=True),
        sa.Column("csrf_secret", sa.String(64), nullable=False),
        sa.Column("signed_in", sa.Boolean, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_console_sessions_expiry", "console_sessions", ["expires_at"])
    op.create_table(
        "console_login_failures",
        sa.Column("client", sa.String(64), primary_key=True),
        sa.Column("failures", sa.Integer, nullable=False),
        sa.Column("last_failed_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("console_login_failures")
    op.drop_index("ix_console_sessions_expiry", table_name="console_sessions")
    op.drop_table("console_sessions")
    op.drop_table("console_owner")
