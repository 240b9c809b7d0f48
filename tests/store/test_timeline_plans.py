"""A listing's page query reads the index its filters were written for, not the account's.

The page query names the accounts of its folders, as every statement of a read does. SQLite
keeps no statistics (the store never runs ANALYZE), so offered `account_id = ?` beside the
folders it would weigh `ix_messages_account_received`, which holds an account's timeline in
order too, against the folder indexes, and takes the account's for a scope of several
folders: it would walk the timeline of every folder of the account to fill a page. The plan
is SQLite's own choice, asked of SQLite; PostgreSQL chooses by its statistics.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from mailfathom.adapters.sql import migrate
from mailfathom.adapters.sql.engine import create_store_engine, sqlite_url
from mailfathom.adapters.sql.reading import SqlMailboxReader
from mailfathom.adapters.sql.sync_store import SqlSyncStore
from mailfathom.app.shared.stored_mail import SummaryFilter, TimelinePosition
from mailfathom.domain.content_state import RemoteFlags
from mailfathom.domain.folders import FolderRole

from .reading_builders import Mail, add_folder, at, store_mail

PAGE = "SELECT messages.seq, messages.received_at"
# The step reading the listed rows themselves (a copy looked up is `earlier_copy`).
LISTED = re.compile(r"^(?:SEARCH|SCAN) messages\b")
FOLDERS: dict[str, int] = {}
# An index range starting at a folder (the sender's index starts at the sender, then the folder).
FOLDER_RANGE = re.compile(r" INDEX ix_messages_\w+ \((?:sender_key=\? AND )?folder_id=\?")


@pytest.fixture
def reader(tmp_path: Path) -> Iterator[SqlMailboxReader]:
    """An account with an Inbox and an Archive holding copies of each other's mail, and a
    second account; some mail unread, flagged, undated."""
    engine = create_store_engine(sqlite_url(tmp_path / "store.sqlite3"))
    migrate.upgrade(engine)
    store = SqlSyncStore(engine)
    inbox = add_folder(store, "INBOX", role=FolderRole.INBOX)
    archive = add_folder(store, "Archive")
    other = add_folder(store, "INBOX", account_id="other", role=FolderRole.INBOX)
    mail = [
        Mail(
            f"m{n}",
            received=at(n) if n % 7 else None,
            sent=at(n),
            sender=f"s{n % 3}@example.org",
            flags=RemoteFlags(seen=bool(n % 2), flagged=not n % 5),
            key=f"{n:064x}",
        )
        for n in range(30)
    ]
    store_mail(store, inbox, *mail)
    store_mail(store, archive, *mail[:12], first_uid=100)
    store_mail(store, other, *mail[:6], first_uid=200)
    FOLDERS.update(inbox=inbox.folder_id, archive=archive.folder_id, other=other.folder_id)
    try:
        yield SqlMailboxReader(engine)
    finally:
        engine.dispose()


def _selection(folders: tuple[str, ...], **filters: Any) -> SummaryFilter:
    return SummaryFilter(folder_ids=tuple(FOLDERS[f] for f in folders), **filters)


def _listed_by(reader: SqlMailboxReader, selection: SummaryFilter) -> tuple[str, list[str]]:
    """The step by which SQLite reads the rows of the first page, and each step by which it
    reads the listed rows over both orders, a first page and a later one (which reaches the
    undated rows)."""
    pages: list[tuple[str, Any]] = []

    def keep(_c: Any, _cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        if statement.startswith(PAGE):
            pages.append((statement, parameters))

    sa.event.listen(reader._engine, "before_cursor_execute", keep)
    try:
        for newest_first in (True, False):
            page = reader.summaries(selection, newest_first=newest_first, after=None, limit=3)
            assert page
            last = page[-1]
            after = TimelinePosition(last.received_at, last.seq)
            reader.summaries(selection, newest_first=newest_first, after=after, limit=30)
    finally:
        sa.event.remove(reader._engine, "before_cursor_execute", keep)
    assert len(pages) >= 4
    with reader._engine.connect() as connection:
        raw = connection.connection.driver_connection
        assert raw is not None
        steps = [
            str(row[3])
            for statement, parameters in pages
            for row in raw.execute(f"EXPLAIN QUERY PLAN {statement}", parameters)
            if LISTED.match(str(row[3]))
        ]
    return steps[0], steps


@pytest.mark.parametrize(
    ("folders", "filters", "index"),
    [
        (("inbox",), {}, "ix_messages_folder_received"),
        (("inbox",), {"seen": False}, "ix_messages_unseen_received"),
        (("inbox",), {"flagged": True}, "ix_messages_flagged_received"),
        (("inbox",), {"sender_address": "s1@example.org"}, "ix_messages_sender_received"),
        (("inbox",), {"sent_on_or_after": at(3), "sent_before": at(6)}, "ix_messages_folder_sent"),
        (("inbox", "archive"), {}, "ix_messages_folder_received"),
        (("inbox", "archive"), {"seen": False}, "ix_messages_unseen_received"),
        (("inbox", "archive"), {"flagged": True}, "ix_messages_flagged_received"),
        (
            ("inbox", "archive"),
            {"sender_address": "s1@example.org"},
            "ix_messages_sender_received",
        ),
        (("inbox", "other"), {}, "ix_messages_folder_received"),
    ],
    ids=[
        "plain",
        "unread",
        "flagged",
        "sender",
        "sent-range",
        "copies",
        "copies-unread",
        "copies-flagged",
        "copies-sender",
        "two-accounts",
    ],
)
def test_a_page_is_read_from_the_index_of_its_filters(
    reader: SqlMailboxReader, folders: tuple[str, ...], filters: dict[str, Any], index: str
) -> None:
    """Each page reads a range of a folder; the first (by which SQLite chose for the
    filters) the range of `index`; a later page may take another folder index, whose range
    its position bounds."""
    first, steps = _listed_by(reader, _selection(folders, **filters))
    assert f" INDEX {index} (" in first, first
    assert all(FOLDER_RANGE.search(step) for step in steps), steps


def test_the_probe_of_a_recipient_reads_the_address_index(reader: SqlMailboxReader) -> None:
    """Whether an address is common is counted from `ix_participants_address` in the
    accounts read; offered the account as a key, SQLite would count from every participant
    of the account instead."""
    probes: list[tuple[str, Any]] = []

    def keep(_c: Any, _cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        if statement.startswith("SELECT count(*)") and "participants" in statement:
            probes.append((statement, parameters))

    sa.event.listen(reader._engine, "before_cursor_execute", keep)
    try:
        selection = _selection(("inbox",), recipient_address="owner@example.net")
        assert reader.summaries(selection, newest_first=True, after=None, limit=3)
    finally:
        sa.event.remove(reader._engine, "before_cursor_execute", keep)
    [(statement, parameters)] = probes
    with reader._engine.connect() as connection:
        raw = connection.connection.driver_connection
        assert raw is not None
        plan = [str(r[3]) for r in raw.execute(f"EXPLAIN QUERY PLAN {statement}", parameters)]
    read = [step for step in plan if step.startswith("SEARCH participants")]
    assert read, plan
    assert all(" INDEX ix_participants_address (" in step for step in read), plan
