"""The console owner's passkeys and the challenges of their ceremonies.

Revision ID: 0026_console_passkeys
Revises: 0025_sync_failures

`console_passkeys` holds one row per passkey: its credential id (base64url), the owner's
user handle it was made under, its COSE public key, the signature count it last reported,
a label, and when it was made and last used. `console_challenges` holds the challenge a
session was given for a ceremony (register or sign in), until it is used or expires. Going
below this revision forgets both: the owner signs in with the password and enrols again.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0026_console_passkeys"
down_revision = "0025_sync_failures"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "console_passkeys",
        sa.Column("credential_id", sa.String(1400), primary_key=True),
        sa.Column("user_handle", sa.String(128), nullable=False),
        sa.Column("public_key", sa.LargeBinary, nullable=False),
        sa.Column("sign_count", sa.BigInteger, nullable=False),
        sa.Column("label", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_table(
        "console_challenges",
        sa.Column("token_hash", sa.String(64), primary_key=True),
        sa.Column("ceremony", sa.String(16), primary_key=True),
        sa.Column("challenge", sa.String(128), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_console_challenges_expiry", "console_challenges", ["expires_at"])


def downgrade() -> None:
    op.drop_index("ix_console_challenges_expiry", table_name="console_challenges")
    op.drop_table("console_challenges")
    op.drop_table("console_passkeys")
