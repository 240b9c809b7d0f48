"""Passage vectors per embedding generation, on SQLite and PostgreSQL alike: what a
generation is offered to read, what it records, how it is counted, and what leaves."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest
import sqlalchemy as sa

from mailfathom.adapters.sql import migrate, passage_store
from mailfathom.adapters.sql.passage_store import SqlPassageStore
from mailfathom.adapters.sql.schema import messages, passage_vectors
from mailfathom.adapters.sql.sync_store import SqlSyncStore
from mailfathom.adapters.sql.vector_cache import RECOUNT_SECONDS
from mailfathom.adapters.vectors.codec import decode
from mailfathom.app.shared.vector_ports import FillState
from mailfathom.domain.content_state import ContentState
from mailfathom.domain.embedding import ProfileIdentity

from .builders import inbox_and_junk, new_message, normalized

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
VALIDITY = 7
SPACE = ProfileIdentity("hashed-words", "1", 4)
OTHER = ProfileIdentity("hashed-words", "2", 4)


def _fill(store: SqlSyncStore) -> dict[int, int]:
    """Five messages in the inbox (uid 3 not held, too large) and two in junk: uid -> seq."""
    inbox, junk = inbox_and_junk(store)
    held = [
        new_message(uid, normalized(f"Subject {uid}", message_id=f"{uid}@x", body=f"Body {uid}"))
        for uid in (1, 2, 4, 5)
    ]
    large = new_message(
        3,
        normalized("Large", message_id="3@x", headers_only=True),
        state=ContentState.EXCEEDED_SIZE_LIMIT,
    )
    store.add_messages(inbox, VALIDITY, [*held, large], NOW)
    spam = [
        new_message(uid, normalized(f"Spam {uid}", message_id=f"{uid}@x", body="buy"))
        for uid in (10, 11)
    ]
    store.add_messages(junk, VALIDITY, spam, NOW)
    with store.engine.connect() as c:
        return {int(u): int(s) for s, u in c.execute(sa.select(messages.c.seq, messages.c.uid))}


def _unit(*values: float) -> list[float]:
    norm = math.sqrt(sum(v * v for v in values))
    return [v / norm for v in values]


def test_a_generation_is_offered_held_mail_outside_junk_once(store: SqlSyncStore) -> None:
    seqs = _fill(store)
    vectors = SqlPassageStore(store.engine)
    generation = vectors.open_generation(SPACE, NOW)
    assert vectors.open_generation(SPACE, NOW) == generation
    assert (generation.positions, generation.filled) == ({"acct": 0}, False)
    offered = vectors.unembedded(generation.generation_id, "acct", 0, 10)
    assert [m.seq for m in offered] == [seqs[u] for u in (1, 2, 4, 5)]
    assert (offered[0].subject, offered[0].plain_text) == ("Subject 1", "Body 1")
    assert {m.account_id for m in offered} == {"acct"}
    assert vectors.fill_state(SPACE.generation).embedded == 0
    assert vectors.fill_state(SPACE.generation).eligible == 4
    # A message is found in the account named with it, or not at all.
    vectors.record(
        generation.generation_id, [("elsewhere", seqs[1], [_unit(1, 0, 0, 0)])], "acct", 0
    )
    assert vectors.fill_state(SPACE.generation).embedded == 0

    first = [("acct", seqs[1], [_unit(1, 0, 0, 0), _unit(1, 1, 0, 0)]), ("acct", seqs[2], [])]
    vectors.record(generation.generation_id, first, "acct", seqs[2])
    vectors.record(generation.generation_id, first, "acct", seqs[2])  # a batch recorded twice
    assert [m.seq for m in vectors.unembedded(generation.generation_id, "acct", 0, 10)] == [
        seqs[4],
        seqs[5],
    ]
    state = vectors.fill_state(SPACE.generation)
    assert (state.embedded, state.eligible, state.remaining, state.filled) == (2, 4, 2, False)
    assert vectors.open_generation(SPACE, NOW).positions == {"acct": seqs[2]}
    with store.engine.connect() as c:
        rows = c.execute(
            sa.select(passage_vectors.c.position, passage_vectors.c.scale, passage_vectors.c.vector)
            .where(passage_vectors.c.seq == seqs[1])
            .order_by(passage_vectors.c.position)
        ).all()
    assert [r.position for r in rows] == [0, 1]
    restored = decode(rows[1].scale, rows[1].vector)
    assert abs(float(restored @ restored) - 1.0) < 0.01
    assert float(restored[0]) == float(restored[1])


def test_a_new_generation_is_kept_apart_and_replaces_the_old_once_filled(
    store: SqlSyncStore,
) -> None:
    seqs = _fill(store)
    vectors = SqlPassageStore(store.engine)
    old = vectors.open_generation(SPACE, NOW)
    vectors.record(old.generation_id, [("acct", seqs[1], [_unit(1, 0, 0, 0)])], "acct", seqs[1])
    vectors.finish(old.generation_id, NOW)
    assert vectors.fill_state(SPACE.generation).filled

    new = vectors.open_generation(OTHER, NOW)
    assert new.generation_id != old.generation_id
    assert len(vectors.unembedded(new.generation_id, "acct", 0, 10)) == 4
    vectors.record(new.generation_id, [("acct", seqs[2], [_unit(0, 1, 0, 0)])], "acct", seqs[2])
    # Until the new one is filled, the old one is whole.
    assert vectors.fill_state(SPACE.generation).embedded == 1
    assert vectors.finish(new.generation_id, NOW) == 1
    assert vectors.fill_state(SPACE.generation) == FillState(SPACE.generation, 0, 4, False)
    assert vectors.fill_state(OTHER.generation).embedded == 1
    with store.engine.connect() as c:
        left = c.execute(sa.select(passage_vectors.c.generation_id).distinct()).scalars().all()
    assert left == [new.generation_id]


def test_vectors_leave_with_their_messages(store: SqlSyncStore) -> None:
    seqs = _fill(store)
    vectors = SqlPassageStore(store.engine)
    generation = vectors.open_generation(SPACE, NOW)
    vectors.record(
        generation.generation_id,
        [("acct", seqs[1], [_unit(1, 0, 0, 0)]), ("acct", seqs[2], [_unit(0, 1, 0, 0)])],
        "acct",
        seqs[2],
    )
    inbox, _ = inbox_and_junk(store)
    store.remove_uids(inbox.folder_id, VALIDITY, [1])
    with store.engine.connect() as c:
        kept = c.execute(sa.select(passage_vectors.c.seq)).scalars().all()
    assert kept == [seqs[2]]
    state = vectors.fill_state(SPACE.generation)
    assert (state.embedded, state.eligible) == (1, 3)
    # A message removed before its batch is recorded is skipped.
    store.remove_uids(inbox.folder_id, VALIDITY, [4])
    vectors.record(
        generation.generation_id, [("acct", seqs[4], [_unit(0, 0, 1, 0)])], "acct", seqs[4]
    )
    assert vectors.fill_state(SPACE.generation).embedded == 1


def test_going_below_the_vector_revision_and_back(store: SqlSyncStore) -> None:
    seqs = _fill(store)
    vectors = SqlPassageStore(store.engine)
    generation = vectors.open_generation(SPACE, NOW)
    vectors.record(
        generation.generation_id, [("acct", seqs[1], [_unit(1, 0, 0, 0)])], "acct", seqs[1]
    )
    migrate.downgrade(store.engine, "0020_message_copies")
    tables = set(sa.inspect(store.engine).get_table_names())
    assert not tables & {"embedding_generations", "embedded_messages", "passage_vectors"}
    assert migrate.current_revision(store.engine) == "0020_message_copies"
    migrate.upgrade(store.engine)
    assert migrate.current_revision(store.engine) == migrate.NEWEST_REVISION
    state = vectors.fill_state(SPACE.generation)
    assert (state.embedded, state.eligible, state.filled) == (0, 4, False)


def test_a_filled_generation_is_unfilled_by_more_mail_waiting_than_it_tolerates(
    store: SqlSyncStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    seqs = _fill(store)
    vectors = SqlPassageStore(store.engine)
    generation = vectors.open_generation(SPACE, NOW)
    assert not vectors.is_filled(SPACE.generation)
    vectors.record(
        generation.generation_id, [("acct", seqs[1], [_unit(1, 0, 0, 0)])], "acct", seqs[1]
    )
    vectors.finish(generation.generation_id, NOW)
    monkeypatch.setattr(passage_store, "WAITING_TOLERATED", 3)
    # Three held messages outside junk wait past the position (junk never counts).
    assert vectors.is_filled(SPACE.generation)
    monkeypatch.setattr(passage_store, "WAITING_TOLERATED", 2)
    assert not vectors.is_filled(SPACE.generation)
    assert not vectors.fill_state(SPACE.generation).filled


def test_whether_a_generation_is_filled_is_counted_again_when_its_mark_moves(
    store: SqlSyncStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The backfill moving on and new mail show at the next call; a change the mark does
    not see (here: content no longer held) once `RECOUNT_SECONDS` have passed."""
    seqs = _fill(store)
    now = [0.0]
    vectors = SqlPassageStore(store.engine, clock=lambda: now[0])
    generation = vectors.open_generation(SPACE, NOW)
    vectors.record(
        generation.generation_id, [("acct", seqs[1], [_unit(1, 0, 0, 0)])], "acct", seqs[1]
    )
    vectors.finish(generation.generation_id, NOW)
    monkeypatch.setattr(passage_store, "WAITING_TOLERATED", 2)
    assert not vectors.is_filled(SPACE.generation)  # uids 2, 4 and 5 wait
    vectors.record(
        generation.generation_id, [("acct", seqs[2], [_unit(0, 1, 0, 0)])], "acct", seqs[2]
    )
    assert vectors.is_filled(SPACE.generation)
    inbox, _ = inbox_and_junk(store)
    later = normalized("Subject 6", message_id="6@x", body="Body 6")
    store.add_messages(inbox, VALIDITY, [new_message(6, later)], NOW)
    assert not vectors.is_filled(SPACE.generation)

    with store.engine.begin() as c:
        c.execute(
            messages.update()
            .where(messages.c.uid == 6)
            .values(content_state=ContentState.EXCEEDED_SIZE_LIMIT.value)
        )
    assert vectors.fill_state(SPACE.generation).filled
    assert not vectors.is_filled(SPACE.generation)
    now[0] += RECOUNT_SECONDS
    assert vectors.is_filled(SPACE.generation)


def test_a_batch_another_process_recorded_meanwhile_is_kept_once(
    store: SqlSyncStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two writers of one generation (the worker of `serve` and `mfctl mailbox embed`) that
    embedded the same message: the second to commit adds nothing, even when it looked before
    the first committed (here: it is made to see every message as not yet read)."""
    seqs = _fill(store)
    first, second = SqlPassageStore(store.engine), SqlPassageStore(store.engine)
    generation = first.open_generation(SPACE, NOW)
    first.record(
        generation.generation_id, [("acct", seqs[1], [_unit(1, 0, 0, 0)])], "acct", seqs[1]
    )
    monkeypatch.setattr(passage_store, "_not_read", lambda _generation_id: sa.true())
    second.record(
        generation.generation_id,
        [
            ("acct", seqs[1], [_unit(1, 0, 0, 0), _unit(0, 1, 0, 0)]),
            ("acct", seqs[2], [_unit(0, 0, 1, 0)]),
        ],
        "acct",
        seqs[2],
    )
    with store.engine.connect() as c:
        rows = c.execute(
            sa.select(passage_vectors.c.seq).order_by(passage_vectors.c.vector_id)
        ).scalars()
        assert list(rows) == [seqs[1], seqs[2]]
