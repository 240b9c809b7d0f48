"""Each account's count of lexical index rows and of their changes, moved with every change.

Revision ID: 0036_search_versions
Revises: 0035_passage_vectors_by_account

`search_versions` holds, per account, how many rows the lexical index has (`rows`) and how
many times rows were added or removed (`changes`). A search compares them before it uses a
word's frequency counted earlier (`reading_search.CommonWords`); counting the whole index at
every search grew with the deployment, and a document replaced in place (same rows, same
highest `seq`) went unseen.

On PostgreSQL, statement triggers on `message_search` move the counters with the rows each
statement added or removed (cascades from `messages` included), one row per account and
statement. On SQLite the index is the FTS5 table `message_fts`, which takes no trigger: the
statements that write it move the counters (`search_index.py`). Going below this revision
drops the counters and the triggers.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0036_search_versions"
down_revision = "0035_passage_vectors_by_account"
branch_labels = None
depends_on = None


def _moved(function: str, rows: str, sign: str) -> str:
    return f"""
        CREATE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            INSERT INTO search_versions (account_id, rows, changes)
            SELECT account_id, {sign}count(*), count(*) FROM {rows} GROUP BY account_id
            ON CONFLICT (account_id) DO UPDATE SET
                rows = search_versions.rows + EXCLUDED.rows,
                changes = search_versions.changes + EXCLUDED.changes;
            RETURN NULL;
        END $$
        """


_POSTGRESQL = [
    _moved("mailfathom_search_added", "added", ""),
    _moved("mailfathom_search_removed", "removed", "-"),
    "CREATE TRIGGER message_search_added AFTER INSERT ON message_search "
    "REFERENCING NEW TABLE AS added FOR EACH STATEMENT "
    "EXECUTE FUNCTION mailfathom_search_added()",
    "CREATE TRIGGER message_search_removed AFTER DELETE ON message_search "
    "REFERENCING OLD TABLE AS removed FOR EACH STATEMENT "
    "EXECUTE FUNCTION mailfathom_search_removed()",
]


def upgrade() -> None:
    op.create_table(
        "search_versions",
        sa.Column("account_id", sa.String(64), primary_key=True),
        sa.Column("rows", sa.BigInteger(), nullable=False),
        sa.Column("changes", sa.BigInteger(), nullable=False),
    )
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "INSERT INTO search_versions (account_id, rows, changes) "
            "SELECT account_id, count(*), 0 FROM message_search GROUP BY account_id"
        )
        for statement in _POSTGRESQL:
            op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for name in ("message_search_added", "message_search_removed"):
            op.execute(f"DROP TRIGGER {name} ON message_search")
        for function in ("mailfathom_search_added", "mailfathom_search_removed"):
            op.execute(f"DROP FUNCTION {function}()")
    op.drop_table("search_versions")
