"""Console keys and recent tool calls.

Revision ID: 0024_caller_keys
Revises: 0023_console

`console_api_keys` holds one row per API key the owner created in the console: its
identifier, the caller entry it admits as (by name), the SHA-256 of its text (the text is
never stored), the one-use nonce of the form that asked for it, and when it was created and
revoked. `console_tool_calls` holds the newest answered tool calls of the MCP endpoint:
tool, caller entry, outcome, code, duration and time, never an argument or a result. Going
below this revision forgets both: every console key stops admitting.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0024_caller_keys"
down_revision = "0023_console"
branch_labels = None
depends_on = None

_BIGINT = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "console_api_keys",
        sa.Column("key_id", sa.String(16), primary_key=True),
        sa.Column("caller", sa.String(64), nullable=False),
        sa.Column("key_sha256", sa.String(64), nullable=False),
        sa.Column("form_nonce", sa.String(32), nullable=False, unique=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_table(
        "console_tool_calls",
        sa.Column("call_id", _BIGINT, primary_key=True, autoincrement=True),
        sa.Column("called_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("tool", sa.String(64), nullable=False),
        sa.Column("caller", sa.String(64), nullable=True),
        sa.Column("outcome", sa.String(32), nullable=False),
        sa.Column("code", sa.Integer, nullable=True),
        sa.Column("duration_us", sa.BigInteger, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("console_tool_calls")
    op.drop_table("console_api_keys")
