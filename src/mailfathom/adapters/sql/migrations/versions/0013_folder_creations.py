"""Folders a caller asked to create, carried to the server by the synchronization run.

Revision ID: 0013_folder_creations
Revises: 0010_move_progress
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013_folder_creations"
down_revision = "0010_move_progress"
branch_labels = None
depends_on = None

_TS = sa.DateTime(timezone=True)
_BIGINT = sa.BigInteger().with_variant(sa.Integer, "sqlite")


def upgrade() -> None:
    op.create_table(
        "folder_creations",
        sa.Column("seq", _BIGINT, primary_key=True, autoincrement=True),
        sa.Column("creation_id", sa.Uuid, nullable=False, unique=True),
        sa.Column("account_id", sa.String(64), nullable=False),
        sa.Column("name", sa.String(256), nullable=False),
        sa.Column("parent_folder_id", _BIGINT),
        sa.Column("alias", sa.String(256), nullable=False),
        sa.Column("alias_key", sa.String(256), nullable=False),
        sa.Column("requester", sa.String(64), nullable=False),
        sa.Column("request_id", sa.String(128), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("last_error_code", sa.Integer),
        sa.Column("noted_remote_name", sa.String(1024)),
        sa.Column("folder_id", _BIGINT),
        sa.Column("created_at", _TS, nullable=False),
        sa.Column("updated_at", _TS, nullable=False),
        sa.UniqueConstraint(
            "account_id", "requester", "request_id", name="uq_folder_creation_identity"
        ),
    )
    op.create_index("ix_folder_creations_open", "folder_creations", ["account_id", "state"])


def downgrade() -> None:
    op.drop_index("ix_folder_creations_open", table_name="folder_creations")
    op.drop_table("folder_creations")
