"""A digest of the whole request beside each mutation record.

Revision ID: 0038_request_digests
Revises: 0037_account_warnings

`request_digest` is the SHA-256 (hex) of every email and value the request that wrote the
record asked (`domain/mutation_requests.py`): a call reusing the request identity is a retry
only when it asks exactly that. Records written before this revision hold none and are
judged by their own value, as they were; going below it forgets the digests.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0038_request_digests"
down_revision = "0037_account_warnings"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("mutation_records", sa.Column("request_digest", sa.String(64)))


def downgrade() -> None:
    with op.batch_alter_table("mutation_records") as batch:
        batch.drop_column("request_digest")
