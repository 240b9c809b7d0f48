"""The vectors of stored mail's passages, per embedding generation.

Revision ID: 0021_passage_vectors
Revises: 0020_message_copies

`embedding_generations`: one row per embedding space mail has been placed in (the active
profile's `ProfileIdentity.generation`, with its model, version and dimension), with how far
its backfill has walked the messages (`after_seq`) and when it was first filled.
`embedded_messages`: each message a generation has read, with how many passages it gave (0
for a message with neither subject nor text of its own), so that it is not read again.
`passage_vectors`: one row per passage, the vector stored compactly (int8 components and the
scale that brings them back to unit length; docs/embeddings-storage.md says why). Every row
names its generation, and a message's rows leave with it.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0021_passage_vectors"
down_revision = "0020_message_copies"
branch_labels = None
depends_on = None

_TS = sa.DateTime(timezone=True)
_BIGINT = sa.BigInteger().with_variant(sa.Integer, "sqlite")


def upgrade() -> None:
    op.create_table(
        "embedding_generations",
        sa.Column("generation_id", _BIGINT, primary_key=True, autoincrement=True),
        sa.Column("generation", sa.String(600), nullable=False, unique=True),
        sa.Column("model", sa.String(256), nullable=False),
        sa.Column("version", sa.String(256), nullable=False),
        sa.Column("dimension", sa.Integer, nullable=False),
        sa.Column("after_seq", _BIGINT, nullable=False),
        sa.Column("created_at", _TS, nullable=False),
        sa.Column("filled_at", _TS),
    )
    op.create_table(
        "embedded_messages",
        sa.Column(
            "generation_id",
            _BIGINT,
            sa.ForeignKey("embedding_generations.generation_id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column(
            "seq", _BIGINT, sa.ForeignKey("messages.seq", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("passages", sa.Integer, nullable=False),
        sa.PrimaryKeyConstraint("generation_id", "seq", name="pk_embedded_messages"),
    )
    op.create_index("ix_embedded_messages_seq", "embedded_messages", ["seq"])
    op.create_table(
        "passage_vectors",
        sa.Column("vector_id", _BIGINT, primary_key=True, autoincrement=True),
        sa.Column(
            "generation_id",
            _BIGINT,
            sa.ForeignKey("embedding_generations.generation_id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column(
            "seq", _BIGINT, sa.ForeignKey("messages.seq", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("scale", sa.Float, nullable=False),
        sa.Column("vector", sa.LargeBinary, nullable=False),
    )
    # A generation's vectors in the order they were added: a reader holding some of them
    # reads only those added since.
    op.create_index(
        "ix_passage_vectors_generation", "passage_vectors", ["generation_id", "vector_id"]
    )
    op.create_index("ix_passage_vectors_seq", "passage_vectors", ["seq"])


def downgrade() -> None:
    op.drop_index("ix_passage_vectors_seq", table_name="passage_vectors")
    op.drop_index("ix_passage_vectors_generation", table_name="passage_vectors")
    op.drop_table("passage_vectors")
    op.drop_index("ix_embedded_messages_seq", table_name="embedded_messages")
    op.drop_table("embedded_messages")
    op.drop_table("embedding_generations")
