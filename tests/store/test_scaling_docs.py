"""docs/scaling.md and `distribution.py` say which tables split by account; the schema is
what they must agree with."""

from __future__ import annotations

import re
from pathlib import Path

import sqlalchemy as sa

from mailfathom.adapters.sql.distribution import (
    DISTRIBUTION_COLUMN,
    PARTITIONED_TABLES,
    PER_ACCOUNT,
    SCOPED_CHILDREN,
    SHARED,
)
from mailfathom.adapters.sql.partitioning import partitioned_tables
from mailfathom.adapters.sql.schema import metadata

DOC = (Path(__file__).resolve().parents[2] / "docs" / "scaling.md").read_text(encoding="utf-8")


def test_every_table_is_in_exactly_one_group() -> None:
    groups = [*PER_ACCOUNT, *SHARED]
    assert sorted(groups) == sorted(metadata.tables)


def test_the_per_account_tables_are_those_carrying_the_account() -> None:
    carrying = {t.name for t in metadata.tables.values() if DISTRIBUTION_COLUMN in t.c}
    assert set(PER_ACCOUNT) == carrying
    assert set(PARTITIONED_TABLES) <= carrying


def test_the_distributed_tables_of_the_docs_are_the_per_account_tables() -> None:
    distributed = re.findall(r"create_distributed_table\('(\w+)', '(\w+)'", DOC)
    assert sorted(t for t, _ in distributed) == sorted(PER_ACCOUNT)
    assert {column for _, column in distributed} == {DISTRIBUTION_COLUMN}
    referenced = re.findall(r"create_reference_table\('(\w+)'\)", DOC)
    assert set(referenced) <= set(SHARED)


def test_the_docs_mark_the_partitioned_tables_and_list_the_rest() -> None:
    marked = re.findall(r"^\| (\w+) \* \|", DOC, flags=re.MULTILINE)
    assert sorted(marked) == sorted(PARTITIONED_TABLES)
    for table in SHARED:
        assert table in DOC


def test_every_key_of_a_partitioned_table_holds_the_partition_column() -> None:
    for table in partitioned_tables():
        keys: list[sa.PrimaryKeyConstraint | sa.UniqueConstraint] = [
            table.primary_key,
            *(c for c in table.constraints if isinstance(c, sa.UniqueConstraint)),
        ]
        for key in keys:
            assert DISTRIBUTION_COLUMN in key.columns, (table.name, key.name)
        for foreign in table.foreign_key_constraints:
            if foreign.referred_table.name in PARTITIONED_TABLES:
                assert DISTRIBUTION_COLUMN in foreign.column_keys, (table.name, foreign.name)


def test_the_outbox_and_draft_children_are_keyed_by_their_parents_account() -> None:
    for name in SCOPED_CHILDREN:
        table = metadata.tables[name]
        assert table.primary_key.columns.keys()[0] == DISTRIBUTION_COLUMN, name
        (foreign,) = table.foreign_key_constraints
        assert foreign.referred_table.name in PER_ACCOUNT
        assert foreign.column_keys[0] == DISTRIBUTION_COLUMN, name
        assert foreign.elements[0].column.name == DISTRIBUTION_COLUMN, name
