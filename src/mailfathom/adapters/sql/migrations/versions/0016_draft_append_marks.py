"""Where a draft's copy was being appended, written down before the APPEND is sent.

Revision ID: 0016_draft_append_marks
Revises: 0015_contact_vouching

A server can store the copy and the answer still be lost (the connection drops, the process
ends). The note (the revision, the folder, its UIDVALIDITY and the UIDNEXT before the APPEND)
lets the next call or pass look for that copy by its Message-ID instead of appending another.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016_draft_append_marks"
down_revision = "0015_contact_vouching"
branch_labels = None
depends_on = None

_COLUMNS = ("append_revision", "append_folder", "append_uidvalidity", "append_since_uid")


def upgrade() -> None:
    op.add_column("drafts", sa.Column("append_revision", sa.Integer))
    op.add_column("drafts", sa.Column("append_folder", sa.String(1024)))
    op.add_column("drafts", sa.Column("append_uidvalidity", sa.BigInteger))
    op.add_column("drafts", sa.Column("append_since_uid", sa.BigInteger))


def downgrade() -> None:
    # Column by column, never by copying the table: SQLite drops a table being replaced
    # with its foreign keys on, which would delete every draft's recipients, files and
    # copies with it (ON DELETE CASCADE).
    for name in reversed(_COLUMNS):
        op.drop_column("drafts", name)
