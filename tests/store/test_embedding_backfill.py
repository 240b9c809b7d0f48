"""The embedding backfill as a thread, on SQLite and PostgreSQL: it fills the generation and
notes it filled, embeds mail stored after that by itself (also an account's added since it
started), and a failing provider only pauses it until the provider answers again, without a
restart."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

from fakes.embedder import FakeEmbedder
from mailfathom.adapters.sql.passage_store import SqlPassageStore
from mailfathom.adapters.sql.sync_store import SqlSyncStore
from mailfathom.app.sync.embedding import StoredMailEmbedding
from mailfathom.app.sync.embedding_backfill import EmbeddingBackfill
from mailfathom.app.sync.types import FolderRecord
from mailfathom.domain.embedding import EmbeddingFailure
from waiting import wait_for

from .builders import inbox_and_junk, new_message, normalized

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
VALIDITY = 5


def _add(store: SqlSyncStore, folder: FolderRecord, uids: range) -> None:
    items = [
        new_message(uid, normalized(f"Note {uid}", message_id=f"{uid}@x", body=f"text {uid}"))
        for uid in uids
    ]
    store.add_messages(folder, VALIDITY, items, NOW)


@contextmanager
def _running(store: SqlSyncStore, embedder: FakeEmbedder) -> Iterator[SqlPassageStore]:
    passages = SqlPassageStore(store.engine)
    backfill = EmbeddingBackfill(
        StoredMailEmbedding(passages, embedder, clock=lambda: NOW, batch_passages=8),
        duty=1.0,
        idle_seconds=0.05,
        sweep_seconds=0.0,
        first_pause=0.05,
        longest_pause=0.2,
    )
    stop = threading.Event()
    thread = threading.Thread(target=backfill.run_forever, args=(stop,), daemon=True)
    thread.start()
    try:
        yield passages
    finally:
        stop.set()
        thread.join(timeout=30)
        assert not thread.is_alive()


def test_the_backfill_fills_and_then_follows_new_mail(store: SqlSyncStore) -> None:
    inbox, _ = inbox_and_junk(store)
    _add(store, inbox, range(1, 21))
    embedder = FakeEmbedder()
    generation = embedder.identity.generation
    with _running(store, embedder) as passages:
        wait_for(lambda: passages.is_filled(generation), "the generation filled")
        assert passages.fill_state(generation).embedded == 20
        _add(store, inbox, range(21, 24))
        wait_for(lambda: passages.fill_state(generation).embedded == 23, "new mail embedded")
        added, _ = inbox_and_junk(store, "added")
        _add(store, added, range(1, 5))
        wait_for(
            lambda: passages.fill_state(generation).embedded == 27, "a new account's mail embedded"
        )
    assert embedder.passages_embedded() == 27


def test_a_failing_provider_pauses_the_backfill_until_it_answers(store: SqlSyncStore) -> None:
    inbox, _ = inbox_and_junk(store)
    _add(store, inbox, range(1, 11))
    embedder = FakeEmbedder()
    embedder.fail_always(EmbeddingFailure.REFUSED)
    generation = embedder.identity.generation
    with _running(store, embedder) as passages:
        wait_for(lambda: embedder.failures() >= 3, "the provider asked again after a pause")
        assert passages.fill_state(generation).embedded == 0
        embedder.fail_always(None)
        wait_for(lambda: passages.is_filled(generation), "the generation filled")
    assert embedder.passages_embedded() == 10
