"""A generation's passage vectors indexed by account.

Revision ID: 0035_passage_vectors_by_account
Revises: 0034_embedding_positions

`ix_passage_vectors_account (generation_id, account_id, vector_id)` takes the place of
`ix_passage_vectors_generation (generation_id, vector_id)`: a search's process reads, extends
and recounts each account's vectors of a generation apart (`VectorCache`), so each statement
names one account and reads that account's range of the index (its highest `vector_id`, the
rows past the ones it holds, how many it holds), where the old index held every account's rows
in one `vector_id` order. The generation still leads, so deleting a generation's rows (the
cascade from `embedding_generations`) reads the index as before.

The new index is built before the old one is dropped; on PostgreSQL the build holds off writes
to `passage_vectors` until the migration's transaction ends (a pass of the table). Going below
this revision builds the old index again and drops the new one.
"""

from __future__ import annotations

from alembic import op

revision = "0035_passage_vectors_by_account"
down_revision = "0034_embedding_positions"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index(
        "ix_passage_vectors_account",
        "passage_vectors",
        ["generation_id", "account_id", "vector_id"],
    )
    op.drop_index("ix_passage_vectors_generation", table_name="passage_vectors")


def downgrade() -> None:
    op.create_index(
        "ix_passage_vectors_generation", "passage_vectors", ["generation_id", "vector_id"]
    )
    op.drop_index("ix_passage_vectors_account", table_name="passage_vectors")
