"""Durable mutation records: changes asked of the owner's mailbox, until they converge.

Revision ID: 0009_mutation_records
Revises: 0008_draft_files
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009_mutation_records"
down_revision = "0008_draft_files"
branch_labels = None
depends_on = None

_TS = sa.DateTime(timezone=True)
_BIGINT = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "mutation_records",
        sa.Column("seq", _BIGINT, primary_key=True, autoincrement=True),
        sa.Column("record_id", sa.Uuid, nullable=False, unique=True),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("account_id", sa.String(64), nullable=False),
        sa.Column("stored_email_id", sa.Uuid, nullable=False),
        sa.Column("folder_id", _BIGINT, nullable=False),
        sa.Column("value", sa.Text, nullable=False),
        sa.Column("requester", sa.String(64), nullable=False),
        sa.Column("request_id", sa.String(128), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("last_error_code", sa.Integer),
        sa.Column("created_at", _TS, nullable=False),
        sa.Column("updated_at", _TS, nullable=False),
        sa.UniqueConstraint(
            "stored_email_id", "kind", "requester", "request_id", name="uq_mutation_identity"
        ),
    )
    op.create_index("ix_mutation_records_open", "mutation_records", ["account_id", "state"])


def downgrade() -> None:
    op.drop_index("ix_mutation_records_open", table_name="mutation_records")
    op.drop_table("mutation_records")
