"""A version of each account's folder rows, moved by the database on every change.

Revision ID: 0031_folder_versions
Revises: 0030_mcp_replicas

`folder_versions` holds one counter per account. Triggers on `folders` add one to the
account's counter in the same transaction as any inserted or deleted row and any change of a
column the read side shows (account, alias, role, visibility, last commit), whichever
process or statement makes it. A reading process keeps the visible folders it read with the
counters it read them under, and reads only the counters while they stand
(`adapters/sql/folder_catalog.py`). Going below this revision drops the counters and the
triggers.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0031_folder_versions"
down_revision = "0030_mcp_replicas"
branch_labels = None
depends_on = None

_SHOWN = ("account_id", "alias", "role", "visible_to_tools", "last_committed_at")


def _bump(row: str) -> str:
    return (
        f"INSERT INTO folder_versions (account_id, version) VALUES ({row}.account_id, 1) "
        "ON CONFLICT (account_id) DO UPDATE SET version = folder_versions.version + 1;"
    )


_POSTGRESQL = [
    f"""
    CREATE FUNCTION mailfathom_folders_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP <> 'INSERT' THEN
            {_bump("OLD")}
        END IF;
        IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND NEW.account_id <> OLD.account_id) THEN
            {_bump("NEW")}
        END IF;
        RETURN NULL;
    END $$
    """,
    "CREATE TRIGGER folders_added_or_removed AFTER INSERT OR DELETE ON folders "
    "FOR EACH ROW EXECUTE FUNCTION mailfathom_folders_changed()",
    f"CREATE TRIGGER folders_changed AFTER UPDATE OF {', '.join(_SHOWN)} ON folders "
    f"FOR EACH ROW WHEN (({', '.join('OLD.' + c for c in _SHOWN)}) IS DISTINCT FROM "
    f"({', '.join('NEW.' + c for c in _SHOWN)})) EXECUTE FUNCTION mailfathom_folders_changed()",
]
_SQLITE = [
    f"CREATE TRIGGER folders_added AFTER INSERT ON folders BEGIN {_bump('NEW')} END",
    f"CREATE TRIGGER folders_removed AFTER DELETE ON folders BEGIN {_bump('OLD')} END",
    f"CREATE TRIGGER folders_changed AFTER UPDATE OF {', '.join(_SHOWN)} ON folders "
    f"WHEN {' OR '.join(f'OLD.{c} IS NOT NEW.{c}' for c in _SHOWN)} "
    f"BEGIN {_bump('OLD')} {_bump('NEW')} END",
]
_TRIGGERS = {
    "postgresql": ("folders_added_or_removed", "folders_changed"),
    "sqlite": ("folders_added", "folders_removed", "folders_changed"),
}


def upgrade() -> None:
    op.create_table(
        "folder_versions",
        sa.Column("account_id", sa.String(64), primary_key=True),
        sa.Column("version", sa.BigInteger(), nullable=False),
    )
    op.execute(
        "INSERT INTO folder_versions (account_id, version) "
        "SELECT DISTINCT account_id, 1 FROM folders"
    )
    dialect = op.get_bind().dialect.name
    for statement in _POSTGRESQL if dialect == "postgresql" else _SQLITE:
        op.execute(statement)


def downgrade() -> None:
    dialect = op.get_bind().dialect.name
    for name in _TRIGGERS["postgresql" if dialect == "postgresql" else "sqlite"]:
        op.execute(f"DROP TRIGGER {name}" + (" ON folders" if dialect == "postgresql" else ""))
    if dialect == "postgresql":
        op.execute("DROP FUNCTION mailfathom_folders_changed()")
    op.drop_table("folder_versions")
