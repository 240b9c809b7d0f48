"""The sent-time filters of the store's read side, on SQLite and PostgreSQL.

The sent time is the Date header's instant as the writer kept it; a message without one (no
Date header, or one that names no instant) has none and never passes a sent-time bound."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from mailfathom.adapters.sql import migrate, reading_filters
from mailfathom.adapters.sql.engine import create_store_engine, sqlite_url
from mailfathom.adapters.sql.reading import SqlMailboxReader
from mailfathom.adapters.sql.sync_store import SqlSyncStore
from mailfathom.app.shared.stored_mail import SummaryFilter, TimelinePosition
from mailfathom.app.shared.stored_mail_ports import MailboxReadStore
from mailfathom.app.sync.types import FolderRecord

from .reading_builders import Mail, add_folder, at, store_mail


@pytest.fixture
def reader(engine: sa.Engine) -> Iterator[MailboxReadStore]:
    read_engine = create_store_engine(
        engine.url.render_as_string(hide_password=False), read_only=True
    )
    yield SqlMailboxReader(read_engine)
    read_engine.dispose()


def _in(folder: FolderRecord, **filters: Any) -> SummaryFilter:
    return SummaryFilter(folder_ids=(folder.folder_id,), **filters)


def _listed(reader: MailboxReadStore, selection: SummaryFilter) -> list[str | None]:
    rows = reader.summaries(selection, newest_first=True, after=None, limit=100)
    return [r.subject for r in rows]


def _found(reader: MailboxReadStore, selection: SummaryFilter, *words: str) -> list[str]:
    return sorted(r.summary.subject or "" for r in reader.search(selection, words, 50))


def _dated(store: SqlSyncStore) -> FolderRecord:
    """s1..s4 sent at minutes 1..4 and received in the opposite order (minutes 14..11), so
    that no test can pass by reading the received time; one message without a sent time."""
    folder = add_folder(store, "INBOX")
    store_mail(
        store,
        folder,
        *(Mail(f"s{m} apple", sent=at(m), received=at(15 - m)) for m in (1, 2, 3, 4)),
        Mail("undated apple", sent=None, received=at(20)),
    )
    return folder


def test_sent_on_or_after_includes_its_instant_and_sent_before_excludes_its_own(
    store: SqlSyncStore, reader: MailboxReadStore
) -> None:
    folder = _dated(store)
    assert _listed(reader, _in(folder, sent_on_or_after=at(2), sent_before=at(4))) == [
        "s2 apple",
        "s3 apple",
    ]
    assert _listed(reader, _in(folder, sent_before=at(2))) == ["s1 apple"]
    assert _listed(reader, _in(folder, sent_on_or_after=at(4))) == ["s4 apple"]
    east = timezone(timedelta(hours=5))
    assert _listed(reader, _in(folder, sent_on_or_after=at(4).astimezone(east))) == ["s4 apple"]


def test_mail_without_a_sent_time_passes_no_sent_bound(
    store: SqlSyncStore, reader: MailboxReadStore
) -> None:
    folder = _dated(store)
    everything = _listed(reader, _in(folder))
    assert "undated apple" in everything
    wide_open = _listed(reader, _in(folder, sent_on_or_after=at(-(10**6))))
    assert wide_open == [s for s in everything if s != "undated apple"]
    assert "undated apple" not in _listed(reader, _in(folder, sent_before=at(10**6)))
    assert "undated apple" not in _found(reader, _in(folder, sent_before=at(10**6)), "apple")


def test_sent_bounds_combine_with_received_bounds(
    store: SqlSyncStore, reader: MailboxReadStore
) -> None:
    folder = _dated(store)
    # Sent 2..3 are received at 13 and 12; received from 13 on leaves only s2.
    both = _in(folder, sent_on_or_after=at(2), sent_before=at(4), received_on_or_after=at(13))
    assert _listed(reader, both) == ["s2 apple"]
    assert _found(reader, both, "apple") == ["s2 apple"]
    disjoint = _in(folder, sent_before=at(2), received_before=at(14))
    assert _listed(reader, disjoint) == []


def test_search_applies_the_sent_bounds_on_every_path(
    store: SqlSyncStore, reader: MailboxReadStore
) -> None:
    """ "apple" is in every message: a word that common has no weight and is answered from
    the timeline; "pear" is in two of five and ranked by the index."""
    folder = _dated(store)
    store_mail(
        store,
        folder,
        Mail("p1 pear", sent=at(1), received=at(30)),
        Mail("p3 pear", sent=at(3), received=at(31)),
        Mail("p9 pear", sent=None, received=at(32)),
        first_uid=100,
    )
    window = _in(folder, sent_on_or_after=at(2), sent_before=at(4))
    assert _found(reader, window, "pear") == ["p3 pear"]
    assert _found(reader, _in(folder, sent_before=at(2)), "pear") == ["p1 pear"]
    assert _found(reader, window, "apple") == ["s2 apple", "s3 apple"]


def test_a_sent_filtered_walk_pages_through_every_match_once(
    store: SqlSyncStore, reader: MailboxReadStore
) -> None:
    folder = add_folder(store, "INBOX")
    store_mail(
        store,
        folder,
        *(
            Mail(f"m{n:02d}", sent=at(n) if n % 3 else None, received=at(100 - n))
            for n in range(30)
        ),
    )
    selection = _in(folder, sent_on_or_after=at(4), sent_before=at(25))
    expected = [f"m{n:02d}" for n in range(4, 25) if n % 3]
    for newest_first in (True, False):
        seen: list[str | None] = []
        after: TimelinePosition | None = None
        while True:
            page = reader.summaries(selection, newest_first=newest_first, after=after, limit=4)
            seen.extend(r.subject for r in page)
            if len(page) < 4:
                break
            after = TimelinePosition(page[-1].received_at, page[-1].seq)
        # Newest received first is the smallest sent first here, and the reverse.
        assert seen == (expected if newest_first else expected[::-1])


def _timeline_plan(path: Path, selection: SummaryFilter) -> tuple[list[str | None], str]:
    """What a listing finds on the SQLite store at `path`, and the plan of its page query."""
    engine = create_store_engine(sqlite_url(path), read_only=True)
    pages: list[tuple[str, Any]] = []

    def keep(conn: Any, cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        if "ORDER BY" in statement and "sent_at" in statement:
            pages.append((statement, parameters))

    sa.event.listen(engine, "before_cursor_execute", keep)
    try:
        found = _listed(SqlMailboxReader(engine), selection)
        statement, parameters = pages[0]
        with engine.connect() as c:
            raw = c.connection.driver_connection
            assert raw is not None
            rows = raw.execute("EXPLAIN QUERY PLAN " + statement, parameters).fetchall()
        return found, " ".join(str(r[-1]) for r in rows)
    finally:
        engine.dispose()


def test_sqlite_reads_a_narrow_sent_range_from_its_index_and_walks_the_timeline_for_a_wide_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "store.sqlite3"
    writer = create_store_engine(sqlite_url(path))
    migrate.upgrade(writer)
    store = SqlSyncStore(writer)
    folder = add_folder(store, "INBOX")
    store_mail(store, folder, *(Mail(f"m{n:02d}", sent=at(n), received=at(n)) for n in range(40)))
    writer.dispose()
    monkeypatch.setattr(reading_filters, "_SHORT_LIST", 10)

    narrow = _in(folder, sent_on_or_after=at(3), sent_before=at(8))
    found, plan = _timeline_plan(path, narrow)
    assert found == [f"m{n:02d}" for n in reversed(range(3, 8))]
    assert "ix_messages_folder_sent" in plan

    wide = _in(folder, sent_on_or_after=at(3), sent_before=at(38))
    found, plan = _timeline_plan(path, wide)
    assert found == [f"m{n:02d}" for n in reversed(range(3, 38))]
    assert "ix_messages_folder_sent" not in plan
    assert "ix_messages_folder_received" in plan
