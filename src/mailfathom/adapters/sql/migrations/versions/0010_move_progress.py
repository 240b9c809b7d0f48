"""A move's progress on its mutation record, so an interrupted move is finished, not repeated.

Revision ID: 0010_move_progress
Revises: 0012_contact_book
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010_move_progress"
down_revision = "0012_contact_book"
branch_labels = None
depends_on = None

_COLUMNS = ("source_uidvalidity", "source_uid", "destination_uidvalidity", "destination_uid_next")


def upgrade() -> None:
    for name in _COLUMNS:
        op.add_column("mutation_records", sa.Column(name, sa.BigInteger))


def downgrade() -> None:
    with op.batch_alter_table("mutation_records") as batch:
        for name in reversed(_COLUMNS):
            batch.drop_column(name)
