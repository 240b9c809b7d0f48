"""The children of the outbox and the drafts carry their parent's account.

Revision ID: 0033_scoped_outbox_children
Revises: 0032_lease_holder_process

`outgoing_recipients`, `draft_recipients`, `draft_files` and `draft_copies` each gain
`account_id` (copied from their send or draft), their primary key starts with it, and their
foreign key to the parent is `(account_id, <parent>_seq)`, referring to new unique indexes
`uq_outgoing_account_seq` and `uq_drafts_account_seq`: as 0028 did for a message's children,
so that every statement about them names the account, and their keys hold when the outbox and
the drafts are distributed by `account_id` (docs/scaling.md).

SQLite rebuilds each child (it cannot change a key in place); PostgreSQL alters them in one
transaction that locks each child, and its parent while its unique index is built, until it
ends. These tables hold a few rows per send or draft, far fewer than the messages' children.
Going below this revision drops the column and restores the keys by the parent's `seq`.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0033_scoped_outbox_children"
down_revision = "0032_lease_holder_process"
branch_labels = None
depends_on = None

# Each parent and the unique index its children's foreign keys refer to.
_PARENTS = {"outgoing_emails": "uq_outgoing_account_seq", "drafts": "uq_drafts_account_seq"}
# Each child: its parent, the column naming the parent's `seq`, and the rest of its key.
_CHILDREN: dict[str, tuple[str, str, str]] = {
    "outgoing_recipients": ("outgoing_emails", "outgoing_seq", "position"),
    "draft_recipients": ("drafts", "draft_seq", "position"),
    "draft_files": ("drafts", "draft_seq", "position"),
    "draft_copies": ("drafts", "draft_seq", "revision"),
}


def upgrade() -> None:
    for parent, index in _PARENTS.items():
        op.create_index(index, parent, ["account_id", "seq"], unique=True)
    for child in _CHILDREN:
        if op.get_bind().dialect.name == "postgresql":
            _alter(child, scoped=True)
        else:
            _rebuild(child, scoped=True)


def downgrade() -> None:
    for child in reversed(_CHILDREN):
        if op.get_bind().dialect.name == "postgresql":
            _alter(child, scoped=False)
        else:
            _rebuild(child, scoped=False)
    for parent, index in _PARENTS.items():
        op.drop_index(index, table_name=parent)


def _key(child: str, *, scoped: bool) -> list[str]:
    _, seq, rest = _CHILDREN[child]
    return ["account_id", seq, rest] if scoped else [seq, rest]


def _alter(child: str, *, scoped: bool) -> None:
    """PostgreSQL: the column, the key and the foreign key changed in place."""
    inspector = sa.inspect(op.get_bind())
    parent, seq, _ = _CHILDREN[child]
    if scoped:
        op.add_column(child, sa.Column("account_id", sa.String(64), nullable=True))
        op.execute(
            f"UPDATE {child} SET account_id = p.account_id "
            f"FROM {parent} p WHERE p.seq = {child}.{seq}"
        )
        op.alter_column(child, "account_id", nullable=False)
    for fk in inspector.get_foreign_keys(child):
        if fk["referred_table"] == parent:
            op.drop_constraint(str(fk["name"]), child, type_="foreignkey")
    op.drop_constraint(str(inspector.get_pk_constraint(child)["name"]), child, type_="primary")
    op.create_primary_key(f"pk_{child}", child, _key(child, scoped=scoped))
    if scoped:
        op.create_foreign_key(
            f"fk_{child}_parent",
            child,
            parent,
            ["account_id", seq],
            ["account_id", "seq"],
            ondelete="CASCADE",
        )
    else:
        op.create_foreign_key(
            f"{child}_{seq}_fkey", child, parent, [seq], ["seq"], ondelete="CASCADE"
        )
        op.drop_column(child, "account_id")


def _rebuild(child: str, *, scoped: bool) -> None:
    """SQLite: a new table in the new shape, filled from the old one, put in its place."""
    bind = op.get_bind()
    parent, seq, _ = _CHILDREN[child]
    # Reflecting into one collection brings the parent along with the child.
    shaped = sa.MetaData()
    old = sa.Table(child, shaped, autoload_with=bind)
    keep = [c for c in old.columns if c.name != "account_id"]
    columns = [sa.Column(c.name, c.type, nullable=c.nullable) for c in keep]
    if scoped:
        columns.append(sa.Column("account_id", sa.String(64), nullable=False))
        foreign = sa.ForeignKeyConstraint(
            ["account_id", seq],
            [f"{parent}.account_id", f"{parent}.seq"],
            ondelete="CASCADE",
            name=f"fk_{child}_parent",
        )
    else:
        foreign = sa.ForeignKeyConstraint([seq], [f"{parent}.seq"], ondelete="CASCADE")
    sa.Table(
        f"{child}_next",
        shaped,
        *columns,
        sa.PrimaryKeyConstraint(*_key(child, scoped=scoped), name=f"pk_{child}"),
        foreign,
    ).create(bind)
    names = ", ".join(c.name for c in keep)
    if scoped:
        source = (
            f"SELECT {', '.join('c.' + c.name for c in keep)}, p.account_id "
            f"FROM {child} c JOIN {parent} p ON p.seq = c.{seq}"
        )
        names += ", account_id"
    else:
        source = f"SELECT {names} FROM {child}"
    op.execute(f"INSERT INTO {child}_next ({names}) {source}")
    op.drop_table(child)
    op.execute(f"ALTER TABLE {child}_next RENAME TO {child}")
