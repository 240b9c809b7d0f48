"""The embedding backfill's position, per account.

Revision ID: 0034_embedding_positions
Revises: 0033_scoped_outbox_children

`embedding_positions` holds, for each generation and account, how far the backfill has
walked that account's messages (`after_seq`), in place of `embedding_generations.after_seq`,
one position over every account's messages. Each statement of the backfill then names one
account (docs/scaling.md). A generation's position becomes the position of each account: every
message at or below it, of whichever account, had been walked.

Going below this revision gives each generation the lowest position of its accounts (0 when
an account has none): every message at or below it has been walked, and the mail above it is
walked again, skipping what the generation has read. The column is dropped and added in place
(not by copying the table: SQLite drops a table being replaced with its foreign keys on,
which would delete every vector with it, ON DELETE CASCADE); added back, it keeps a default of
0.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0034_embedding_positions"
down_revision = "0033_scoped_outbox_children"
branch_labels = None
depends_on = None

_BIGINT = sa.BigInteger().with_variant(sa.Integer, "sqlite")


def upgrade() -> None:
    op.create_table(
        "embedding_positions",
        sa.Column(
            "generation_id",
            _BIGINT,
            sa.ForeignKey("embedding_generations.generation_id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("account_id", sa.String(64), nullable=False),
        sa.Column("after_seq", _BIGINT, nullable=False),
        sa.PrimaryKeyConstraint("generation_id", "account_id", name="pk_embedding_positions"),
    )
    op.execute(
        "INSERT INTO embedding_positions (generation_id, account_id, after_seq) "
        "SELECT g.generation_id, a.account_id, g.after_seq "
        "FROM embedding_generations g CROSS JOIN accounts a"
    )
    op.drop_column("embedding_generations", "after_seq")


def downgrade() -> None:
    op.add_column(
        "embedding_generations",
        sa.Column("after_seq", _BIGINT, nullable=False, server_default="0"),
    )
    # An account without a position has walked nothing: the generation's lowest is then 0.
    op.execute(
        "UPDATE embedding_generations SET after_seq = COALESCE(("
        "SELECT min(COALESCE(p.after_seq, 0)) FROM accounts a "
        "LEFT JOIN embedding_positions p ON p.account_id = a.account_id "
        "AND p.generation_id = embedding_generations.generation_id), 0)"
    )
    op.drop_table("embedding_positions")
