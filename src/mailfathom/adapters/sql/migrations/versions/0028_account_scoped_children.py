"""The tables keyed by a message's `seq` carry the message's account.

Revision ID: 0028_account_scoped_children
Revises: 0027_console_first_passkey

Each child of `messages` gains `account_id` (copied from its message), its primary key starts
with it, and its foreign key to the message is `(account_id, seq)`, referring to a new unique
index `uq_messages_account_seq`. A query can then name the account on every table it reads,
and the same keys hold when these tables are partitioned or distributed by `account_id`
(see docs/scaling.md), where a key without the partition column cannot exist.

SQLite rebuilds each table (it cannot change a key in place); PostgreSQL alters them, in one
transaction that locks each child exclusively until it ends and leaves it about twice its
size until vacuumed (what that means for an upgrade: docs/scaling.md). Going
below this revision drops the column and restores the keys by `seq`; it is refused on a
database whose tables are partitioned by account (`account_id` is their partition key).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0028_account_scoped_children"
down_revision = "0027_console_first_passkey"
branch_labels = None
depends_on = None

# Each child, with its primary key before and after this revision.
_KEYS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "message_bodies": (("seq",), ("account_id", "seq")),
    "participants": (("seq", "position"), ("account_id", "seq", "position")),
    "message_identifiers": (("seq", "identifier"), ("account_id", "seq", "identifier")),
    "parts": (("seq", "position"), ("account_id", "seq", "position")),
    "keywords": (("seq", "keyword"), ("account_id", "seq", "keyword")),
    "repair_requests": (("seq",), ("account_id", "seq")),
    "message_search": (("seq",), ("account_id", "seq")),
    "message_trust": (("seq",), ("account_id", "seq")),
    "embedded_messages": (("generation_id", "seq"), ("generation_id", "account_id", "seq")),
    "passage_vectors": (("vector_id",), ("vector_id",)),
}
# Indexes that served the cascade from `messages` by `seq` alone, and their successors.
_SEQ_INDEXES = {
    "embedded_messages": ("ix_embedded_messages_seq", "ix_embedded_messages_message"),
    "passage_vectors": ("ix_passage_vectors_seq", "ix_passage_vectors_message"),
}
_ACCOUNT_INDEX = "uq_messages_account_seq"


def _children() -> list[str]:
    present = set(sa.inspect(op.get_bind()).get_table_names())
    return [t for t in _KEYS if t in present]


def _partitioned() -> bool:
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return False
    found = bind.exec_driver_sql(
        "SELECT 1 FROM pg_partitioned_table p JOIN pg_class c ON c.oid = p.partrelid "
        "WHERE c.relname = 'messages' AND c.relnamespace = current_schema()::regnamespace"
    )
    return found.first() is not None


def upgrade() -> None:
    op.create_index(_ACCOUNT_INDEX, "messages", ["account_id", "seq"], unique=True)
    for table in _children():
        if op.get_bind().dialect.name == "postgresql":
            _alter(table, scoped=True)
        else:
            _rebuild(table, scoped=True)


def downgrade() -> None:
    if _partitioned():
        raise RuntimeError(
            "the message tables are partitioned by account_id; going below "
            "0028_account_scoped_children would drop their partition key"
        )
    for table in reversed(_children()):
        if op.get_bind().dialect.name == "postgresql":
            _alter(table, scoped=False)
        else:
            _rebuild(table, scoped=False)
    op.drop_index(_ACCOUNT_INDEX, table_name="messages")


def _alter(table: str, *, scoped: bool) -> None:
    """PostgreSQL: the column, the key and the foreign key changed in place."""
    bind = op.get_bind()
    inspector = sa.inspect(bind)
    before, after = _KEYS[table]
    added = scoped and "account_id" not in {c["name"] for c in inspector.get_columns(table)}
    if added:
        op.add_column(table, sa.Column("account_id", sa.String(64), nullable=True))
        op.execute(
            f"UPDATE {table} SET account_id = m.account_id "
            f"FROM messages m WHERE m.seq = {table}.seq"
        )
        op.alter_column(table, "account_id", nullable=False)
    for fk in inspector.get_foreign_keys(table):
        if fk["referred_table"] == "messages":
            op.drop_constraint(str(fk["name"]), table, type_="foreignkey")
    pk = inspector.get_pk_constraint(table)
    if before != after:
        op.drop_constraint(str(pk["name"]), table, type_="primary")
        op.create_primary_key(f"pk_{table}", table, list(after if scoped else before))
    old_index, new_index = _SEQ_INDEXES.get(table, (None, None))
    if old_index and new_index:
        op.drop_index(old_index if scoped else new_index, table_name=table)
    if scoped:
        op.create_foreign_key(
            f"fk_{table}_message",
            table,
            "messages",
            ["account_id", "seq"],
            ["account_id", "seq"],
            ondelete="CASCADE",
        )
    else:
        op.create_foreign_key(
            f"fk_{table}_seq", table, "messages", ["seq"], ["seq"], ondelete="CASCADE"
        )
        if table != "message_identifiers":
            op.drop_column(table, "account_id")
    if old_index and new_index:
        if scoped:
            op.create_index(new_index, table, ["account_id", "seq"])
        else:
            op.create_index(old_index, table, ["seq"])


def _rebuild(table: str, *, scoped: bool) -> None:
    """SQLite: a new table in the new shape, filled from the old one, put in its place."""
    bind = op.get_bind()
    # Reflecting into one collection brings the tables the old one refers to along with it.
    shaped = sa.MetaData()
    old = sa.Table(table, shaped, autoload_with=bind)
    indexes = [
        (i.name, [c.name for c in i.columns], bool(i.unique))
        for i in old.indexes
        if i.name not in _SEQ_INDEXES.get(table, ())
    ]
    keep = [c for c in old.columns if c.name != "account_id"]
    before, after = _KEYS[table]
    columns = [sa.Column(c.name, c.type, nullable=c.nullable) for c in keep]
    if scoped or table == "message_identifiers":
        columns.append(sa.Column("account_id", sa.String(64), nullable=False))
    if scoped:
        foreign = sa.ForeignKeyConstraint(
            ["account_id", "seq"],
            ["messages.account_id", "messages.seq"],
            ondelete="CASCADE",
            name=f"fk_{table}_message",
        )
    else:
        foreign = sa.ForeignKeyConstraint(
            ["seq"], ["messages.seq"], ondelete="CASCADE", name=f"fk_{table}_seq"
        )
    other_foreign = [
        sa.ForeignKeyConstraint(
            [c.name for c in fk.columns],
            [e.target_fullname for e in fk.elements],
            ondelete=fk.ondelete,
        )
        for fk in old.foreign_key_constraints
        if fk.referred_table.name != "messages"
    ]
    rebuilt = sa.Table(
        f"{table}_next",
        shaped,
        *columns,
        sa.PrimaryKeyConstraint(*(after if scoped else before), name=f"pk_{table}"),
        foreign,
        *other_foreign,
    )
    rebuilt.create(bind)
    names = ", ".join(c.name for c in keep)
    if scoped:
        source = (
            f"SELECT {', '.join('c.' + c.name for c in keep)}, m.account_id "
            f"FROM {table} c JOIN messages m ON m.seq = c.seq"
        )
        names += ", account_id"
    elif table == "message_identifiers":
        source = f"SELECT {names}, account_id FROM {table}"
        names += ", account_id"
    else:
        source = f"SELECT {names} FROM {table}"
    op.execute(f"INSERT INTO {table}_next ({names}) {source}")
    op.drop_table(table)
    op.execute(f"ALTER TABLE {table}_next RENAME TO {table}")
    for name, indexed, unique in indexes:
        op.create_index(name, table, indexed, unique=unique)
    old_index, new_index = _SEQ_INDEXES.get(table, (None, None))
    if old_index and new_index:
        if scoped:
            op.create_index(new_index, table, ["account_id", "seq"])
        else:
            op.create_index(old_index, table, ["seq"])
