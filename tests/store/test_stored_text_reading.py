"""Bodies a synchronization pass keeps in the content store: indexed from the octets the
preparation wrote, read back from the packs, never copied into the database, and reported
missing when their record is damaged. On SQLite and PostgreSQL alike."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa

from mailfathom.adapters.content.packs import PackContentStore
from mailfathom.adapters.preparer import MimeMessagePreparer
from mailfathom.adapters.sql.engine import create_store_engine
from mailfathom.adapters.sql.reading import SqlMailboxReader
from mailfathom.adapters.sql.schema import message_bodies
from mailfathom.adapters.sql.sync_store import SqlSyncStore
from mailfathom.app.shared.stored_mail import SummaryFilter
from mailfathom.app.sync.types import FolderRecord, NewMessage
from mailfathom.domain.content_state import ContentState, RemoteFlags

from .reading_builders import NOW, VALIDITY, add_folder
from .searching import matching_seqs

PLAIN_ONLY = (
    b"From: Ann <ann@example.org>\r\nTo: bob@example.net\r\nSubject: Harbour plan\r\n"
    b"Message-ID: <plain@example.org>\r\nContent-Type: text/plain; charset=utf-8\r\n"
    b"Content-Transfer-Encoding: 8bit\r\n\r\n"
    + "The pelican crossing near the harbour opens in Mai, Grüße.\r\n".encode()
)
WITH_HTML = (
    b"From: Cy <cy@example.org>\r\nTo: bob@example.net\r\nSubject: Menu\r\n"
    b"Message-ID: <html@example.org>\r\nMIME-Version: 1.0\r\n"
    b"Content-Type: text/html; charset=utf-8\r\n\r\n"
    b"<html><body><p>Tonight: <b>octopus</b> salad</p></body></html>\r\n"
)


@pytest.fixture
def content(tmp_path: Path) -> Iterator[PackContentStore]:
    store = PackContentStore(tmp_path / "content")
    yield store
    store.close()


def _prepared_and_stored(
    store: SqlSyncStore, folder: FolderRecord, content_root: Path, raws: list[bytes]
) -> None:
    """What a synchronization pass does with fetched messages, in this process."""
    preparer = MimeMessagePreparer(content_root, workers=0)
    prepared = preparer.start_batch([(raw, False) for raw in raws]).result()
    store.add_messages(
        folder,
        VALIDITY,
        [
            NewMessage(
                uid=uid,
                size_octets=len(raw),
                flags=RemoteFlags(),
                modseq=uid,
                received_at=NOW + timedelta(minutes=uid),
                normalized=p.normalized,
                content_state=ContentState.STORED,
                content_key=p.content_key,
                stored_text=p.stored_text,
            )
            for uid, (raw, p) in enumerate(zip(raws, prepared, strict=True), start=1)
        ],
        NOW,
    )


def _reader(engine: sa.Engine, content: PackContentStore) -> SqlMailboxReader:
    url = engine.url.render_as_string(hide_password=False)
    return SqlMailboxReader(create_store_engine(url, read_only=True), texts=content.get_text)


def test_prepared_text_is_indexed_and_read_from_the_content_store(
    store: SqlSyncStore, engine: sa.Engine, content: PackContentStore, tmp_path: Path
) -> None:
    inbox = add_folder(store, "INBOX")
    _prepared_and_stored(store, inbox, tmp_path / "content", [PLAIN_ONLY, WITH_HTML])
    with engine.connect() as c:
        assert c.execute(sa.select(sa.func.count()).select_from(message_bodies)).scalar() == 0
    pelican = matching_seqs(engine, [inbox.folder_id], "pelican")
    greeting = matching_seqs(engine, [inbox.folder_id], "grüße")
    octopus = matching_seqs(engine, [inbox.folder_id], "octopus")
    assert len(pelican) == 1
    assert greeting == pelican
    assert len(octopus) == 1

    reader = _reader(engine, content)
    scope = SummaryFilter(folder_ids=(inbox.folder_id,))
    (hit,) = reader.search(scope, ["pelican"], 10)
    assert "pelican crossing" in hit.body
    ids = [
        r.stored_email_id for r in reader.summaries(scope, newest_first=True, after=None, limit=10)
    ]
    rows = reader.emails(ids, [inbox.folder_id])
    by_subject = {r.summary.subject: r for r in rows.values()}
    harbour, menu = by_subject["Harbour plan"], by_subject["Menu"]
    assert harbour.plain_text is not None
    assert "Grüße" in harbour.plain_text
    assert harbour.html is None
    assert menu.plain_text is not None
    assert "octopus" in menu.plain_text
    assert menu.html is not None
    assert "<b>octopus</b>" in menu.html
    assert not harbour.text_missing
    assert not menu.text_missing
    without_html = reader.emails(ids, [inbox.folder_id], with_html=False)
    assert all(r.html is None for r in without_html.values())
    assert {r.plain_text for r in without_html.values()} == {harbour.plain_text, menu.plain_text}


def test_a_damaged_text_reads_as_missing_and_the_rest_still_reads(
    store: SqlSyncStore, engine: sa.Engine, content: PackContentStore, tmp_path: Path
) -> None:
    inbox = add_folder(store, "INBOX")
    _prepared_and_stored(store, inbox, tmp_path / "content", [PLAIN_ONLY, WITH_HTML])
    reader = _reader(engine, content)
    scope = SummaryFilter(folder_ids=(inbox.folder_id,))
    ids = {
        r.subject: r.stored_email_id
        for r in reader.summaries(scope, newest_first=True, after=None, limit=10)
    }
    rows = reader.emails(list(ids.values()), [inbox.folder_id])
    key = rows[ids["Harbour plan"]].content_key
    assert key is not None
    location = content.locate(key)
    assert location is not None
    with location.path.open("r+b") as pack:
        pack.seek(location.offset + location.length + 40)
        pack.write(b"#")

    rows = reader.emails(list(ids.values()), [inbox.folder_id])
    damaged = rows[ids["Harbour plan"]]
    assert damaged.text_missing
    assert (damaged.plain_text, damaged.html) == (None, None)
    assert not rows[ids["Menu"]].text_missing
    (hit,) = reader.search(scope, ["pelican"], 10)
    assert hit.body == ""  # still found by the index; no snippet to show
    assert reader.emails([uuid.uuid4()], [inbox.folder_id]) == {}


def test_a_reader_without_the_content_store_reads_database_bodies_only(
    store: SqlSyncStore, engine: sa.Engine, tmp_path: Path
) -> None:
    inbox = add_folder(store, "INBOX")
    _prepared_and_stored(store, inbox, tmp_path / "content", [PLAIN_ONLY])
    url = engine.url.render_as_string(hide_password=False)
    reader = SqlMailboxReader(create_store_engine(url, read_only=True))
    scope = SummaryFilter(folder_ids=(inbox.folder_id,))
    (summary,) = reader.summaries(scope, newest_first=True, after=None, limit=10)
    row = reader.emails([summary.stored_email_id], [inbox.folder_id])[summary.stored_email_id]
    assert (row.plain_text, row.text_missing) == (None, False)
