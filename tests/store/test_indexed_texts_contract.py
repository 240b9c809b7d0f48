"""The store reads a pattern scan relies on, on SQLite and PostgreSQL: bodies as far as the
lexical index holds them, read by `seq` and only inside the folders asked for, and a lexical
search that leaves the bodies unread."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from mailfathom.adapters.sql.engine import create_store_engine
from mailfathom.adapters.sql.reading import SqlMailboxReader
from mailfathom.adapters.sql.schema import messages
from mailfathom.adapters.sql.search_index import INDEXED_BODY_CHARACTERS
from mailfathom.adapters.sql.sync_store import SqlSyncStore
from mailfathom.app.shared.stored_mail import SummaryFilter
from mailfathom.app.shared.stored_mail_ports import MailboxReadStore
from mailfathom.domain.content_state import ContentState

from .reading_builders import Mail, add_folder, at, store_mail


@pytest.fixture
def reader(engine: sa.Engine) -> Iterator[MailboxReadStore]:
    read_engine = create_store_engine(
        engine.url.render_as_string(hide_password=False), read_only=True
    )
    yield SqlMailboxReader(read_engine)
    read_engine.dispose()


def _seqs(reader: MailboxReadStore, folder_id: int) -> dict[str | None, int]:
    rows = reader.summaries(
        SummaryFilter(folder_ids=(folder_id,)), newest_first=True, after=None, limit=50
    )
    return {r.subject: r.seq for r in rows}


def test_indexed_texts_are_the_bodies_in_scope_as_the_index_holds_them(
    store: SqlSyncStore, reader: MailboxReadStore, engine: sa.Engine
) -> None:
    inbox = add_folder(store, "INBOX")
    hidden = add_folder(store, "Hidden", visible=False)
    other = add_folder(store, "Other")
    long_body = "lighthouse " + "k" * INDEXED_BODY_CHARACTERS
    store_mail(
        store,
        inbox,
        Mail("short", received=at(1), body="The ferry leaves at nine."),
        Mail("long", received=at(2), body=long_body),
        Mail("headers only", received=at(3), state=ContentState.AWAITING_HEADROOM),
    )
    store_mail(store, hidden, Mail("hidden", received=at(4), body="Withheld text."))
    store_mail(store, other, Mail("other", received=at(5), body="Other folder text."))
    seqs = _seqs(reader, inbox.folder_id)
    with engine.connect() as c:
        hidden_seq = c.execute(
            sa.select(messages.c.seq).where(messages.c.folder_id == hidden.folder_id)
        ).scalar_one()
    other_seq = _seqs(reader, other.folder_id)["other"]
    asked = [*seqs.values(), hidden_seq, other_seq]

    texts = reader.indexed_texts(asked, [inbox.folder_id, hidden.folder_id])
    assert set(texts) == set(seqs.values())
    assert texts[seqs["short"]] == "The ferry leaves at nine."
    assert texts[seqs["long"]] == long_body[:INDEXED_BODY_CHARACTERS]
    assert texts[seqs["headers only"]] == ""
    assert reader.indexed_texts(asked, [other.folder_id]) == {other_seq: "Other folder text."}
    assert reader.indexed_texts([], [inbox.folder_id]) == {}
    assert reader.indexed_texts(asked, []) == {}
    with reader.snapshot() as view:
        assert view.indexed_texts([seqs["short"]], [inbox.folder_id]) == {
            seqs["short"]: "The ferry leaves at nine."
        }


def test_a_search_without_bodies_ranks_alike_and_reads_none(
    store: SqlSyncStore, reader: MailboxReadStore
) -> None:
    inbox = add_folder(store, "INBOX")
    store_mail(
        store,
        inbox,
        Mail("ferry times", received=at(1), body="The ferry leaves at nine, the ferry returns."),
        Mail("harbour", received=at(2), body="One ferry today."),
        Mail("unrelated", received=at(3), body="Nothing here."),
    )
    scope = SummaryFilter(folder_ids=(inbox.folder_id,))
    with_bodies = reader.search(scope, ["ferry"], 10)
    without = reader.search(scope, ["ferry"], 10, with_bodies=False)
    assert [(r.summary.seq, r.rank) for r in without] == [
        (r.summary.seq, r.rank) for r in with_bodies
    ]
    assert len(without) == 2
    assert all(r.body == "" for r in without)
    assert all("ferry" in r.body for r in with_bodies)


def test_indexed_words_narrow_a_listing_to_mail_the_index_holds_them_for(
    store: SqlSyncStore, reader: MailboxReadStore
) -> None:
    inbox = add_folder(store, "INBOX")
    store_mail(
        store,
        inbox,
        Mail("one", received=at(1), body="The ferry leaves at nine."),
        Mail("two", received=at(2), body="A ferry, at last, leaves."),
        Mail("three", received=at(3), body="The bus leaves at nine."),
        Mail("ferry in the subject", received=at(4), body="Nothing else."),
    )

    def listed(*words: str) -> list[str | None]:
        scope = SummaryFilter(folder_ids=(inbox.folder_id,), indexed_words=words)
        rows = reader.summaries(scope, newest_first=False, after=None, limit=10)
        return [r.subject for r in rows]

    assert listed("ferry", "leaves") == ["one", "two"]
    assert listed("ferry") == ["one", "two", "ferry in the subject"]
    assert listed("LEAVES", "nine") == ["one", "three"]
    assert listed("absent") == []
    # Punctuation alone is no word: it narrows nothing.
    assert listed("...") == ["one", "two", "three", "ferry in the subject"]
