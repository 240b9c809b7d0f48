"""The visible folders a reading process keeps follow every change another process commits,
on SQLite and PostgreSQL alike, and are read again only when one was committed.

The reader has an engine of its own, as `serve` has; the changes are made through
`SqlSyncStore` on another engine, as a synchronization in another process makes them, or by
a bare statement on `folders`, which the database's triggers see as well."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa

from mailfathom.adapters.sql.engine import create_store_engine
from mailfathom.adapters.sql.reading import SqlMailboxReader
from mailfathom.adapters.sql.sync_store import SqlSyncStore
from mailfathom.domain.config import FolderMapping
from mailfathom.domain.folders import FolderRole

from .reading_builders import NOW, VALIDITY, add_folder


@pytest.fixture
def read_engine(engine: sa.Engine) -> Iterator[sa.Engine]:
    created = create_store_engine(engine.url.render_as_string(hide_password=False), read_only=True)
    yield created
    created.dispose()


@pytest.fixture
def folder_reads(read_engine: sa.Engine) -> Iterator[list[list[Any]]]:
    """The values given to each statement of the reader that read folder rows (a list bound
    as one array, on PostgreSQL, gives its values)."""
    found: list[list[Any]] = []

    def seen(_c: Any, _cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        if "FROM folders" in statement:
            values = parameters.values() if isinstance(parameters, dict) else parameters
            found.append([v for value in values for v in _each(value)])

    sa.event.listen(read_engine, "before_cursor_execute", seen)
    yield found
    sa.event.remove(read_engine, "before_cursor_execute", seen)


def _each(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else [value]


def _shown(reader: SqlMailboxReader, *accounts: str) -> set[tuple[str, str, str | None]]:
    return {
        (f.account_id, f.alias, f.role.value if f.role else None)
        for f in reader.readable_folders(list(accounts))
    }


def test_a_folder_added_renamed_withheld_or_removed_elsewhere_is_seen_by_the_next_read(
    store: SqlSyncStore, read_engine: sa.Engine
) -> None:
    reader = SqlMailboxReader(read_engine)
    add_folder(store, "INBOX", role=FolderRole.INBOX)
    assert _shown(reader, "acct") == {("acct", "INBOX", "Inbox")}

    add_folder(store, "Archive")
    assert _shown(reader, "acct") == {("acct", "INBOX", "Inbox"), ("acct", "Archive", None)}

    add_folder(store, "Archive", alias="Old mail", role=FolderRole.ARCHIVE)
    assert _shown(reader, "acct") == {("acct", "INBOX", "Inbox"), ("acct", "Old mail", "Archive")}

    store.settle("acct", [FolderMapping("INBOX", "INBOX", FolderRole.INBOX)])
    assert _shown(reader, "acct") == {("acct", "INBOX", "Inbox")}

    store.settle("acct", [FolderMapping("INBOX", "INBOX", FolderRole.INBOX), _archive()])
    assert _shown(reader, "acct") == {("acct", "INBOX", "Inbox"), ("acct", "Old mail", "Archive")}

    with store.engine.begin() as c:
        c.execute(sa.text("DELETE FROM folders WHERE alias = 'Old mail'"))
    assert _shown(reader, "acct") == {("acct", "INBOX", "Inbox")}


def _archive() -> FolderMapping:
    return FolderMapping("Archive", "Old mail", FolderRole.ARCHIVE)


def test_a_commit_elsewhere_moves_the_freshness_the_next_read_reports(
    store: SqlSyncStore, read_engine: sa.Engine
) -> None:
    reader = SqlMailboxReader(read_engine)
    inbox = add_folder(store, "INBOX", role=FolderRole.INBOX)
    assert [f.last_committed_at for f in reader.readable_folders(["acct"])] == [None]
    store.record_progress(
        inbox.folder_id, uidvalidity=VALIDITY, highest_modseq=None, uid_next=1, committed_at=NOW
    )
    assert [f.last_committed_at for f in reader.readable_folders(["acct"])] == [NOW]


def test_folders_are_read_again_only_for_the_account_whose_folders_changed(
    store: SqlSyncStore, read_engine: sa.Engine, folder_reads: list[list[Any]]
) -> None:
    reader = SqlMailboxReader(read_engine)
    add_folder(store, "INBOX", account_id="one")
    add_folder(store, "INBOX", account_id="two")
    assert len(_shown(reader, "one", "two")) == 2
    assert len(folder_reads) == 1

    for _ in range(3):
        assert len(_shown(reader, "one", "two")) == 2
    # A synchronization pass that changes nothing writes nothing the reader must read again.
    add_folder(store, "INBOX", account_id="one")
    assert len(_shown(reader, "one", "two")) == 2
    assert len(folder_reads) == 1

    add_folder(store, "Sent", account_id="two", role=FolderRole.SENT)
    assert _shown(reader, "one", "two") == {
        ("one", "INBOX", None),
        ("two", "INBOX", None),
        ("two", "Sent", "Sent"),
    }
    assert len(folder_reads) == 2
    assert "two" in folder_reads[1]
    assert "one" not in folder_reads[1]


def test_readers_of_one_process_share_what_they_keep(
    store: SqlSyncStore, read_engine: sa.Engine, folder_reads: list[list[Any]]
) -> None:
    from mailfathom.adapters.sql.folder_catalog import FolderCatalog

    catalog = FolderCatalog()
    add_folder(store, "INBOX")
    first, second = (SqlMailboxReader(read_engine, catalog=catalog) for _ in range(2))
    assert _shown(first, "acct") == _shown(second, "acct") == {("acct", "INBOX", None)}
    assert len(folder_reads) == 1


def test_the_counters_go_and_come_back_with_their_revision(
    store: SqlSyncStore, read_engine: sa.Engine
) -> None:
    from mailfathom.adapters.sql import migrate

    add_folder(store, "INBOX")
    migrate.downgrade(store.engine, "0030_mcp_replicas")
    with store.engine.begin() as c:
        c.execute(sa.text("UPDATE folders SET alias = 'Renamed'"))
    assert "folder_versions" not in sa.inspect(store.engine).get_table_names()
    migrate.upgrade(store.engine)
    reader = SqlMailboxReader(read_engine)
    assert _shown(reader, "acct") == {("acct", "Renamed", None)}
    add_folder(store, "INBOX", alias="Again")
    assert _shown(reader, "acct") == {("acct", "Again", None)}
