"""What `Store.Partitions` does to a database, and what it refuses (docs/scaling.md)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import sqlalchemy as sa

from mailfathom.adapters.sql import migrate, partitioning
from mailfathom.adapters.sql.engine import create_store_engine, sqlite_url
from mailfathom.adapters.sql.schema import keywords, message_bodies, messages, participants
from mailfathom.adapters.sql.sync_store import SqlSyncStore
from mailfathom.domain.codes import StoreCode
from mailfathom.domain.config import AccountConfig, AccountKind, FolderMapping
from mailfathom.domain.content_state import RemoteFlags
from mailfathom.domain.errors import StoreError
from mailfathom.domain.folders import FolderRole

from .builders import new_message, normalized

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)


def _store_mail(engine: sa.Engine, account_id: str, uids: range) -> None:
    store = SqlSyncStore(engine)
    store.ensure_account(
        AccountConfig(
            account_id=account_id, display_name=account_id, kind=AccountKind.LOCAL, folders=()
        )
    )
    folder = store.ensure_folder(account_id, FolderMapping("INBOX", "INBOX", FolderRole.INBOX))
    flags = RemoteFlags(keywords=frozenset({"$label1"}))
    batch = [
        new_message(uid, normalized(f"S{uid}", message_id=f"{account_id}{uid}@x"), flags=flags)
        for uid in uids
    ]
    store.add_messages(folder, 7, batch, NOW)


def _partition_rows(engine: sa.Engine, table: str) -> dict[str, int]:
    with engine.connect() as c:
        rows = c.execute(
            sa.text(f"SELECT tableoid::regclass::text, count(*) FROM {table} GROUP BY 1")
        )
        return {str(name): int(n) for name, n in rows}


@pytest.mark.postgres
def test_mail_of_many_accounts_spreads_over_the_partitions_and_each_child_follows_its_message(
    partitioned_postgres_url: str,
) -> None:
    engine = create_store_engine(partitioned_postgres_url)
    try:
        for n in range(12):
            _store_mail(engine, f"account-{n}", range(1, 4))
        spread = _partition_rows(engine, "messages")
        assert len(spread) > 1
        assert sum(spread.values()) == 36
        for child in (participants, keywords, message_bodies):
            with engine.connect() as c:
                apart = c.execute(
                    sa.text(
                        f"SELECT count(*) FROM {child.name} ch JOIN messages m "
                        "ON m.account_id = ch.account_id AND m.seq = ch.seq "
                        "WHERE replace(ch.tableoid::regclass::text, :child, '') "
                        "<> replace(m.tableoid::regclass::text, 'messages', '')"
                    ),
                    {"child": child.name},
                ).scalar_one()
            assert apart == 0
        with engine.begin() as c:
            c.execute(messages.delete().where(messages.c.account_id == "account-0"))
        with engine.connect() as c:
            left = c.execute(
                sa.select(sa.func.count()).where(keywords.c.account_id == "account-0")
            ).scalar_one()
        assert left == 0
    finally:
        engine.dispose()


@pytest.mark.postgres
def test_partitioning_again_in_the_same_number_changes_nothing_and_another_is_refused(
    partitioned_postgres_url: str,
) -> None:
    engine = create_store_engine(partitioned_postgres_url)
    try:
        with engine.connect() as c:
            found = partitioning.partition_count(c)
        assert found is not None
        assert partitioning.partition(engine, found) is False
        with pytest.raises(StoreError) as refused:
            partitioning.partition(engine, found + 1)
        assert refused.value.code == StoreCode.PARTITIONING_REFUSED
    finally:
        engine.dispose()


@pytest.mark.postgres
def test_a_database_holding_mail_is_left_unpartitioned(migrated_postgres_url: str) -> None:
    engine = create_store_engine(migrated_postgres_url)
    try:
        _store_mail(engine, "a", range(1, 3))
        with pytest.raises(StoreError) as refused:
            partitioning.partition(engine, 4)
        assert refused.value.code == StoreCode.PARTITIONING_REFUSED
        with engine.connect() as c:
            assert partitioning.partition_count(c) is None
            assert c.execute(sa.select(sa.func.count()).select_from(messages)).scalar_one() == 2
    finally:
        engine.dispose()


@pytest.mark.postgres
def test_going_below_the_account_column_is_refused_when_partitioned(
    partitioned_postgres_url: str,
) -> None:
    engine = create_store_engine(partitioned_postgres_url)
    try:
        with pytest.raises(RuntimeError, match="partition key"):
            migrate.downgrade(engine, "0027_console_first_passkey")
        assert migrate.stored_revision(engine) == migrate.NEWEST_REVISION
    finally:
        engine.dispose()


def test_sqlite_is_never_partitioned(tmp_path: object) -> None:
    from pathlib import Path

    assert isinstance(tmp_path, Path)
    engine = create_store_engine(sqlite_url(tmp_path / "s.sqlite3"))
    try:
        migrate.upgrade(engine)
        with pytest.raises(StoreError) as refused:
            partitioning.partition(engine, 4)
        assert refused.value.code == StoreCode.PARTITIONING_REFUSED
    finally:
        engine.dispose()
