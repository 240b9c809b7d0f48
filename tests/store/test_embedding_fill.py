"""Embedding stored mail through `Embedder`, on SQLite and PostgreSQL: batch by batch, each
batch committed with its position, resumed after a provider failure, new mail and mail whose
content arrived late found by the next walk, and junk and mail not held never sent."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from datetime import UTC, datetime

import pytest

from fakes.embedder import FakeEmbedder
from mailfathom.adapters.sql.passage_store import SqlPassageStore
from mailfathom.adapters.sql.sync_store import SqlSyncStore
from mailfathom.app.shared.embedding_ports import EmbeddingUnavailable
from mailfathom.app.shared.vector_ports import FillState
from mailfathom.app.sync.embedding import StoredMailEmbedding
from mailfathom.app.sync.types import FolderRecord
from mailfathom.domain.content_state import ContentState
from mailfathom.domain.embedding import EmbeddingFailure
from mailfathom.domain.passages import MAX_PASSAGES

from .builders import inbox_and_junk, new_message, normalized

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
VALIDITY = 3


def _add(store: SqlSyncStore, folder: FolderRecord, uids: range, word: str = "lease") -> None:
    store.add_messages(
        folder,
        VALIDITY,
        [
            new_message(
                uid,
                normalized(f"About the {word} {uid}", message_id=f"{uid}@x", body=f"{word} {uid}"),
            )
            for uid in uids
        ],
        NOW,
    )


def _use_case(store: SqlSyncStore, embedder: FakeEmbedder) -> StoredMailEmbedding:
    return StoredMailEmbedding(
        SqlPassageStore(store.engine), embedder, clock=lambda: NOW, batch_passages=10
    )


def test_stored_mail_is_embedded_in_batches_and_junk_never(store: SqlSyncStore) -> None:
    inbox, junk = inbox_and_junk(store)
    _add(store, inbox, range(1, 26))
    _add(store, junk, range(100, 104), word="lottery")
    large = new_message(
        40,
        normalized("too large", message_id="40@x", headers_only=True),
        state=ContentState.EXCEEDED_SIZE_LIMIT,
    )
    store.add_messages(inbox, VALIDITY, [large], NOW)
    embedder = FakeEmbedder()
    states: list[FillState] = []
    report = _use_case(store, embedder).run(states.append)
    assert (report.messages, report.passages, report.resumed_with) == (25, 25, 0)
    assert report.state.filled
    assert (report.state.embedded, report.state.eligible) == (25, 25)
    assert all(len(batch) <= max(10, MAX_PASSAGES) for batch in embedder.batches)
    sent = list(itertools.chain.from_iterable(embedder.batches))
    assert not [t for t in sent if "lottery" in t or "too large" in t]
    assert sent[0] == "About the lease 1\nlease 1"
    # Progress rises batch by batch to the whole.
    assert [s.embedded for s in states] == sorted(s.embedded for s in states)
    assert states[-1].embedded == 25
    again = _use_case(store, embedder).run()
    assert (again.messages, again.passages) == (0, 0)


def test_a_failing_provider_leaves_what_was_recorded_and_the_next_run_resumes(
    store: SqlSyncStore,
) -> None:
    inbox, _ = inbox_and_junk(store)
    _add(store, inbox, range(1, 31))
    embedder = FakeEmbedder()
    embedder.fail_next()  # nothing: the first call answers
    use_case = _use_case(store, embedder)
    generation = use_case.generation()
    first = use_case.step(generation, "acct", 0)
    assert (first.messages, first.passages) == (10, 10)
    embedder.fail_next(EmbeddingFailure.UNREACHABLE)
    with pytest.raises(EmbeddingUnavailable):
        use_case.step(generation, "acct", first.after_seq)
    state = use_case.fill_state()
    assert (state.embedded, state.filled) == (10, False)
    report = _use_case(store, embedder).run()
    assert report.resumed_with == 10
    assert (report.messages, report.state.embedded, report.state.filled) == (20, 30, True)
    sent = list(itertools.chain.from_iterable(embedder.batches))
    assert len(sent) == len(set(sent)) == 30


def test_new_mail_and_content_that_arrived_late_are_found_by_the_next_walk(
    store: SqlSyncStore,
) -> None:
    inbox, _ = inbox_and_junk(store)
    waiting = new_message(
        1,
        normalized("waits for room", message_id="1@x", headers_only=True),
        state=ContentState.AWAITING_HEADROOM,
    )
    store.add_messages(inbox, VALIDITY, [waiting], NOW)
    _add(store, inbox, range(2, 6))
    embedder = FakeEmbedder()
    assert _use_case(store, embedder).run().messages == 4
    _add(store, inbox, range(6, 8))
    store.fill_content(
        inbox.folder_id,
        VALIDITY,
        1,
        normalized("waits for room", message_id="1@x", body="the leak in the flat"),
        "ab" * 32,
    )
    use_case = _use_case(store, embedder)
    generation = use_case.generation()
    # From the position: the new mail only.
    step = use_case.step(generation, "acct", generation.positions["acct"])
    assert step.messages == 2
    # From the start: the message whose content came later.
    late = use_case.step(generation, "acct", 0)
    assert late.messages == 1
    assert embedder.batches[-1] == ["waits for room\nthe leak in the flat"]
    assert use_case.fill_state().remaining == 0


def test_vectors_of_another_dimension_are_never_stored(store: SqlSyncStore) -> None:
    inbox, _ = inbox_and_junk(store)
    _add(store, inbox, range(1, 4))

    class Wrong(FakeEmbedder):
        def embed_passages(self, texts: Sequence[str]) -> list[list[float]]:
            return [vector[:-1] for vector in super().embed_passages(texts)]

    use_case = _use_case(store, Wrong())
    with pytest.raises(EmbeddingUnavailable) as raised:
        use_case.step(use_case.generation(), "acct", 0)
    assert raised.value.failure is EmbeddingFailure.MISMATCH
    assert use_case.fill_state().embedded == 0


def test_each_account_is_walked_from_its_own_position(store: SqlSyncStore) -> None:
    """A walk that has passed one account's newest message still reads another account's
    mail below it: its messages wait behind its own position only (docs/scaling.md)."""
    inbox, _ = inbox_and_junk(store)
    other, _ = inbox_and_junk(store, "other")
    _add(store, inbox, range(1, 4))
    _add(store, other, range(1, 4), word="flat")
    use_case = _use_case(store, FakeEmbedder())
    generation = use_case.generation()
    assert generation.positions == {"acct": 0, "other": 0}
    walked = use_case.step(generation, "other", 0)
    assert walked.messages == 3
    generation = use_case.generation()
    assert generation.positions == {"acct": 0, "other": walked.after_seq}
    behind = use_case.step(generation, "acct", generation.positions["acct"])
    assert behind.messages == 3
    assert behind.after_seq < walked.after_seq


def test_the_accounts_take_turns_a_batch_each(store: SqlSyncStore) -> None:
    inbox, _ = inbox_and_junk(store)
    other, _ = inbox_and_junk(store, "other")
    _add(store, inbox, range(1, 31))
    _add(store, other, range(1, 6), word="flat")
    embedder = FakeEmbedder()
    report = _use_case(store, embedder).run()
    assert (report.messages, report.state.filled) == (35, True)
    # The other account's mail, stored after the first's, waits for one batch only.
    assert [len(b) for b in embedder.batches] == [10, 5, 10, 10]
    assert all("flat" in text for text in embedder.batches[1])
