"""No planner statistics over what the contact book holds about a person (PostgreSQL).

Revision ID: 0017_contact_statistics
Revises: 0016_draft_append_marks

ANALYZE, which autovacuum runs on a table that changed enough, keeps sample values of each
column in pg_statistic: the most common ones and the bounds of a histogram, which for a
column of distinct names or addresses are names and addresses of people in the book. An
erasure removes a person from the book's tables; a copy in the catalog would outlive it. A
statistics target of 0 keeps ANALYZE from sampling these columns, and changing a column's
type to the type it has removes what was gathered before (PostgreSQL drops a column's
statistics on any type change; setting the target alone leaves them). The book is looked up
by key and walked by name, which needs no histogram. SQLite keeps no sample values (no
ANALYZE runs on it), so there is nothing to change there.
"""

from __future__ import annotations

from alembic import op

revision = "0017_contact_statistics"
down_revision = "0016_draft_append_marks"
branch_labels = None
depends_on = None

_PERSONAL = (
    ("contacts", "display_name", "varchar(256)"),
    ("contacts", "name_key", "text"),
    ("contacts", "preferred_address", "varchar(320)"),
    ("contacts", "note", "text"),
    ("contact_addresses", "address_key", "varchar(320)"),
    ("contact_addresses", "address", "varchar(320)"),
)


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for table, column, kind in _PERSONAL:
        op.execute(f"ALTER TABLE {table} ALTER COLUMN {column} SET STATISTICS 0")
        op.execute(f"ALTER TABLE {table} ALTER COLUMN {column} TYPE {kind}")


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for table, column, _ in _PERSONAL:
        op.execute(f"ALTER TABLE {table} ALTER COLUMN {column} SET STATISTICS -1")
