"""Laying the large per-account tables out partitioned by account on PostgreSQL.

`partition(engine, n)` replaces the tables of `distribution.PARTITIONED_TABLES` with tables
`PARTITION BY HASH (account_id)` of `n` partitions each (`<table>_p0` ... `<table>_p<n-1>`),
with the columns, indexes and foreign keys of `schema.metadata`. It runs once, when those
tables hold no row: on a database just migrated to the newest revision. A database already
holding mail is refused and left as it is (its rows would have to be copied into the new
tables under a lock on every one of them; dump and restore into a new partitioned database
instead). Every later migration alters the partitioned parents, which PostgreSQL applies to
each partition. The migrations' triggers on the tables replaced are made again, as the
database words them, on the partitioned parents.

A partitioned table can enforce a unique key only if the key holds the partition column, so
three keys differ from the unpartitioned layout (`WIDENED_KEYS`): the primary keys of
`messages` and `passage_vectors` and the two unique constraints of `messages` gain
`account_id`. `seq`, `stored_email_id` and `vector_id` stay unique across accounts by how
they are made (one sequence, random identifiers); the store never relies on the database
to catch a duplicate of them.
"""

from __future__ import annotations

import sqlalchemy as sa

from mailfathom.adapters.sql import migrate
from mailfathom.adapters.sql.distribution import DISTRIBUTION_COLUMN, PARTITIONED_TABLES
from mailfathom.adapters.sql.schema import metadata
from mailfathom.domain.codes import StoreCode
from mailfathom.domain.errors import StoreError

MAX_PARTITIONS = 1024

# The unique keys of the unpartitioned layout that a partitioned table holds with
# `account_id` added: (table, key name or None for the primary key, its columns there).
WIDENED_KEYS: tuple[tuple[str, str | None, tuple[str, ...]], ...] = (
    ("messages", None, ("account_id", "seq")),
    ("messages", "uq_messages_folder_uid", ("folder_id", "uidvalidity", "uid", "account_id")),
    ("messages", "uq_messages_stored_email", ("stored_email_id", "account_id")),
    ("passage_vectors", None, ("account_id", "vector_id")),
)


def partition_count(connection: sa.Connection) -> int | None:
    """How many partitions `messages` has; None when it is not partitioned (or on SQLite)."""
    if connection.dialect.name != "postgresql":
        return None
    row = connection.exec_driver_sql(
        "SELECT p.partrelid, (SELECT count(*) FROM pg_inherits i WHERE i.inhparent = p.partrelid)"
        " FROM pg_partitioned_table p JOIN pg_class c ON c.oid = p.partrelid"
        " WHERE c.relname = 'messages' AND c.relnamespace = current_schema()::regnamespace"
    ).first()
    return None if row is None else int(row[1])


def _refused(text: str) -> StoreError:
    return StoreError(text, code=int(StoreCode.PARTITIONING_REFUSED))


def partitioned_tables() -> list[sa.Table]:
    """The tables of `PARTITIONED_TABLES` as a partitioned layout declares them, parents
    before children (in a collection of their own, beside the tables they refer to)."""
    laid_out = sa.MetaData()
    for source in metadata.sorted_tables:
        if source.name not in PARTITIONED_TABLES:
            source.to_metadata(laid_out)
    widened = {(t, k): cols for t, k, cols in WIDENED_KEYS}
    tables: list[sa.Table] = []
    for source in metadata.sorted_tables:
        if source.name in PARTITIONED_TABLES:
            tables.append(_partitioned(source, laid_out, widened))
    return tables


def _partitioned(
    source: sa.Table,
    laid_out: sa.MetaData,
    widened: dict[tuple[str, str | None], tuple[str, ...]],
) -> sa.Table:
    counter = source.autoincrement_column
    columns = []
    for column in source.columns:
        copied = sa.Column(column.name, column.type, nullable=column.nullable)
        if column is counter:
            # The name PostgreSQL gives a serial column's sequence, as in the plain layout.
            numbers = sa.Sequence(f"{source.name}_{column.name}_seq", metadata=laid_out)
            copied = sa.Column(
                column.name, column.type, numbers, server_default=numbers.next_value()
            )
        columns.append(copied)
    key = widened.get((source.name, None), tuple(c.name for c in source.primary_key))
    constraints: list[sa.Constraint] = [sa.PrimaryKeyConstraint(*key, name=f"pk_{source.name}")]
    for unique in source.constraints:
        if isinstance(unique, sa.UniqueConstraint):
            name = unique.name
            if name is None and source.name == "messages":
                name = "uq_messages_stored_email"
            cols = widened.get((source.name, str(name)), tuple(unique.columns.keys()))
            constraints.append(sa.UniqueConstraint(*cols, name=name))
    constraints.extend(
        sa.ForeignKeyConstraint(
            [c.name for c in foreign.columns],
            [e.target_fullname for e in foreign.elements],
            ondelete=foreign.ondelete,
            name=foreign.name,
        )
        for foreign in source.foreign_key_constraints
    )
    table = sa.Table(
        source.name,
        laid_out,
        *columns,
        *constraints,
        postgresql_partition_by=f"HASH ({DISTRIBUTION_COLUMN})",
    )
    for index in source.indexes:
        if index.name == _SAME_AS_PRIMARY_KEY:
            continue
        sa.Index(
            index.name,
            *(table.c[c.name] for c in index.columns),
            unique=index.unique,
            **index.dialect_kwargs,
        )
    return table


# On a partitioned `messages` the primary key is (account_id, seq) itself.
_SAME_AS_PRIMARY_KEY = "uq_messages_account_seq"


def partition(engine: sa.Engine, partitions: int) -> bool:
    """Lay the large tables out in `partitions` hash partitions by account; whether this call
    did (False: they already are, in that number). Refused on SQLite, for a number out of
    range, for a database partitioned in another number, and for one already holding mail."""
    if engine.dialect.name != "postgresql":
        raise _refused("Store.Partitions applies to a PostgreSQL store (Store.DatabaseUrl) only.")
    if not 1 <= partitions <= MAX_PARTITIONS:
        raise _refused(f"Store.Partitions is between 1 and {MAX_PARTITIONS}.")
    with migrate.migrating(engine) as connection:
        found = partition_count(connection)
        if found == partitions:
            return False
        if found is not None:
            raise _refused(
                "The store's message tables are partitioned in another number than "
                "Store.Partitions; a new number takes a dump and a restore into a new database."
            )
        for name in PARTITIONED_TABLES:
            if connection.execute(sa.text(f"SELECT 1 FROM {name} LIMIT 1")).first():
                raise _refused(
                    "Store.Partitions is applied to a new database only; this one already "
                    "holds mail and is left unpartitioned (see docs/scaling.md)."
                )
        tables = partitioned_tables()
        # The migrations' triggers on these tables (0036: `message_search`) are made again on
        # the partitioned tables, as the database itself words them.
        triggers = list(
            connection.execute(
                sa.text(
                    "SELECT pg_get_triggerdef(t.oid) FROM pg_trigger t"
                    " JOIN pg_class c ON c.oid = t.tgrelid"
                    " WHERE NOT t.tgisinternal AND c.relname = ANY(:names)"
                    " AND c.relnamespace = current_schema()::regnamespace ORDER BY t.tgname"
                ),
                {"names": list(PARTITIONED_TABLES)},
            ).scalars()
        )
        for table in reversed(tables):
            connection.execute(sa.text(f"DROP TABLE {table.name}"))
        for table in tables:
            table.create(connection)
            for remainder in range(partitions):
                connection.execute(
                    sa.text(
                        f"CREATE TABLE {table.name}_p{remainder} PARTITION OF {table.name} "
                        f"FOR VALUES WITH (MODULUS {partitions}, REMAINDER {remainder})"
                    )
                )
        for trigger in triggers:
            connection.exec_driver_sql(trigger)
    return True
