"""The exact scan behind the structured filters, on SQLite and PostgreSQL alike: a message
is scored by its nearest passage, only messages the filters leave answer, a selective
filter never empties the answer, and what changes in the store is seen by the next call."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import numpy as np
import sqlalchemy as sa

from mailfathom.adapters.sql.engine import create_store_engine
from mailfathom.adapters.sql.passage_store import SqlPassageStore
from mailfathom.adapters.sql.reading import SqlMailboxReader
from mailfathom.adapters.sql.schema import messages
from mailfathom.adapters.sql.sync_store import SqlSyncStore
from mailfathom.adapters.sql.vector_cache import RECOUNT_SECONDS, VectorCache
from mailfathom.adapters.vectors.scan import VectorMatrix
from mailfathom.app.shared.stored_mail import SummaryFilter
from mailfathom.app.sync.types import FolderRecord
from mailfathom.domain.config import AccountConfig, AccountKind, FolderMapping
from mailfathom.domain.embedding import ProfileIdentity
from mailfathom.domain.folders import FolderRole

from .builders import new_message, normalized

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
VALIDITY = 7
SPACE = ProfileIdentity("hashed-words", "1", 3)
OTHER = ProfileIdentity("hashed-words", "2", 3)


def _held(cache: VectorCache, connection: sa.Connection, generation: str) -> VectorMatrix | None:
    """The cache's matrix of the account's vectors of `generation`, as `connection` sees it."""
    found = cache.matrices(connection, generation, ["acct"])
    if found is None:
        return None
    (matrix,) = found
    return matrix


def _unit(*values: float) -> list[float]:
    norm = math.sqrt(sum(v * v for v in values))
    return [v / norm for v in values]


def _mail(store: SqlSyncStore) -> tuple[FolderRecord, FolderRecord, dict[int, int]]:
    store.ensure_account(
        AccountConfig(account_id="acct", display_name="acct", kind=AccountKind.LOCAL, folders=())
    )
    inbox = store.ensure_folder("acct", FolderMapping("INBOX", "INBOX", FolderRole.INBOX))
    archive = store.ensure_folder("acct", FolderMapping("Archive", "Archive", FolderRole.ARCHIVE))
    store.add_messages(
        inbox,
        VALIDITY,
        [
            new_message(
                uid,
                normalized(
                    f"S{uid}",
                    message_id=f"{uid}@x",
                    body="b",
                    sender="landlord@example.org" if uid == 3 else "other@example.org",
                ),
            )
            for uid in (1, 2, 3, 4)
        ],
        NOW,
    )
    store.add_messages(archive, VALIDITY, [new_message(9, normalized("S9", message_id="9@x"))], NOW)
    with store.engine.connect() as c:
        seqs = {int(u): int(s) for s, u in c.execute(sa.select(messages.c.seq, messages.c.uid))}
    return inbox, archive, seqs


def test_messages_rank_by_their_nearest_passage_under_the_filters(store: SqlSyncStore) -> None:
    inbox, archive, seqs = _mail(store)
    vectors = SqlPassageStore(store.engine)
    generation = vectors.open_generation(SPACE, NOW)
    vectors.record(
        generation.generation_id,
        [
            # Far first passage, near second: scored by the second.
            ("acct", seqs[1], [_unit(0, 0, 1), _unit(1, 0.1, 0)]),
            ("acct", seqs[2], [_unit(1, 0.5, 0)]),
            ("acct", seqs[3], [_unit(0, 1, 0)]),
            ("acct", seqs[4], [_unit(1, 0.5, 0)]),  # the same as 2: the higher seq first
            ("acct", seqs[9], [_unit(1, 0, 0)]),
        ],
        "acct",
        seqs[9],
    )
    other = vectors.open_generation(OTHER, NOW)
    vectors.record(other.generation_id, [("acct", seqs[3], [_unit(1, 0, 0)])], "acct", seqs[3])
    reader = SqlMailboxReader(store.engine)
    query = [2.0, 0.0, 0.0]  # not unit length: it is normalized
    inbox_only = SummaryFilter(folder_ids=(inbox.folder_id,))
    found = reader.nearest(SPACE.generation, query, inbox_only, 10)
    assert [n.seq for n in found] == [seqs[1], seqs[4], seqs[2], seqs[3]]
    assert math.isclose(found[0].score, _unit(1, 0.1, 0)[0], abs_tol=0.01)
    assert math.isclose(found[-1].score, 0.0, abs_tol=0.01)
    assert [n.seq for n in reader.nearest(SPACE.generation, query, inbox_only, 2)] == [
        seqs[1],
        seqs[4],
    ]
    both = SummaryFilter(folder_ids=(inbox.folder_id, archive.folder_id))
    assert reader.nearest(SPACE.generation, query, both, 1)[0].seq == seqs[9]
    # A selective filter leaves its one message, however far it is from the query.
    landlord = SummaryFilter(folder_ids=both.folder_ids, sender_address="landlord@example.org")
    assert [n.seq for n in reader.nearest(SPACE.generation, query, landlord, 10)] == [seqs[3]]
    # Another generation's vectors are never compared.
    assert [n.seq for n in reader.nearest(OTHER.generation, query, both, 10)] == [seqs[3]]
    assert reader.nearest("never made", query, both, 10) == []
    assert reader.nearest(SPACE.generation, [1.0, 0.0], both, 10) == []


def test_the_next_call_sees_vectors_added_and_messages_removed(store: SqlSyncStore) -> None:
    inbox, _, seqs = _mail(store)
    vectors = SqlPassageStore(store.engine)
    generation = vectors.open_generation(SPACE, NOW)
    vectors.record(generation.generation_id, [("acct", seqs[1], [_unit(1, 0, 0)])], "acct", seqs[1])
    reader = SqlMailboxReader(store.engine)
    inbox_only = SummaryFilter(folder_ids=(inbox.folder_id,))
    query = [1.0, 0.0, 0.0]
    assert [n.seq for n in reader.nearest(SPACE.generation, query, inbox_only, 5)] == [seqs[1]]
    vectors.record(
        generation.generation_id, [("acct", seqs[2], [_unit(1, 0.2, 0)])], "acct", seqs[2]
    )
    assert [n.seq for n in reader.nearest(SPACE.generation, query, inbox_only, 5)] == [
        seqs[1],
        seqs[2],
    ]
    store.remove_uids(inbox.folder_id, VALIDITY, [1])
    assert [n.seq for n in reader.nearest(SPACE.generation, query, inbox_only, 5)] == [seqs[2]]
    assert [n.seq for n in reader.nearest(SPACE.generation, query, inbox_only, 1)] == [seqs[2]]


def test_summaries_of_names_only_messages_in_the_selection_s_folders(store: SqlSyncStore) -> None:
    inbox, archive, seqs = _mail(store)
    reader = SqlMailboxReader(store.engine)
    inbox_only = SummaryFilter(folder_ids=(inbox.folder_id,))
    found = reader.summaries_of([seqs[9], seqs[2], seqs[2], seqs[1], 10**9], inbox_only)
    assert set(found) == {seqs[1], seqs[2]}
    assert found[seqs[2]].subject == "S2"
    assert found[seqs[2]].folder_alias == "INBOX"
    both = SummaryFilter(folder_ids=(inbox.folder_id, archive.folder_id))
    assert set(reader.summaries_of([seqs[9]], both)) == {seqs[9]}
    assert reader.summaries_of([], both) == {}
    assert reader.summaries_of([seqs[1]], SummaryFilter(folder_ids=())) == {}


def test_a_search_on_an_older_snapshot_keeps_the_shared_vectors(store: SqlSyncStore) -> None:
    """A search that began before the worker committed more vectors sees fewer of them: the
    matrix other searches extended is kept, not read again from nothing."""
    inbox, _, seqs = _mail(store)
    vectors = SqlPassageStore(store.engine)
    generation = vectors.open_generation(SPACE, NOW)
    vectors.record(generation.generation_id, [("acct", seqs[1], [_unit(1, 0, 0)])], "acct", seqs[1])
    cache = VectorCache()
    read_engine = create_store_engine(
        store.engine.url.render_as_string(hide_password=False), read_only=True
    )
    reader = SqlMailboxReader(read_engine, vectors=cache)
    inbox_only = SummaryFilter(folder_ids=(inbox.folder_id,))
    query = [1.0, 0.0, 0.0]
    with read_engine.connect() as first:
        assert _held(cache, first, SPACE.generation) is not None
    with reader.snapshot() as older:
        assert [n.seq for n in older.nearest(SPACE.generation, query, inbox_only, 5)] == [seqs[1]]
        vectors.record(
            generation.generation_id, [("acct", seqs[2], [_unit(1, 0.2, 0)])], "acct", seqs[2]
        )
        assert len(reader.nearest(SPACE.generation, query, inbox_only, 5)) == 2
        with read_engine.connect() as c:
            extended = _held(cache, c, SPACE.generation)
        assert extended is not None
        assert len(extended) == 2
        # The older snapshot answers from the matrix as it is (the newer vector is of a
        # message it holds too, so answering with it is no harm).
        assert seqs[1] in [n.seq for n in older.nearest(SPACE.generation, query, inbox_only, 5)]
    with read_engine.connect() as c:
        assert _held(cache, c, SPACE.generation) is extended
    assert len(extended) == 2
    read_engine.dispose()


def test_each_message_s_pooled_vector_follows_its_passages(store: SqlSyncStore) -> None:
    """Over many messages the passages compared are those of the messages nearest by their
    pooled vector (here: of every message, one candidate per message asked for); the pooled
    vectors follow the passages as the backfill adds them, as messages leave, and per
    generation."""
    inbox, _, seqs = _mail(store)
    vectors = SqlPassageStore(store.engine)
    generation = vectors.open_generation(SPACE, NOW)
    vectors.record(
        generation.generation_id,
        [("acct", seqs[1], [_unit(0, 0, 1), _unit(1, 0, 0)]), ("acct", seqs[2], [_unit(0, 1, 0)])],
        "acct",
        seqs[2],
    )
    now = [0.0]
    cache = VectorCache(lambda: now[0], exact_messages=0, candidates=1, per_message=1)
    reader = SqlMailboxReader(store.engine, vectors=cache)
    inbox_only = SummaryFilter(folder_ids=(inbox.folder_id,))
    query = [1.0, 0.0, 0.0]

    def held(generation: str) -> tuple[list[int], list[int], list[list[float]]]:
        with store.engine.connect() as c:
            matrix = _held(cache, c, generation)
        assert matrix is not None
        index = matrix.index
        pooled = (index.pooled * index.scales[:, None].astype(np.float64)).round(2).tolist()
        return index.seqs.tolist(), index.counts.tolist(), pooled

    assert held(SPACE.generation) == ([seqs[1], seqs[2]], [2, 1], [[0.71, 0, 0.71], [0, 1, 0]])
    (found,) = reader.nearest(SPACE.generation, query, inbox_only, 1)
    assert found.seq == seqs[1]
    assert math.isclose(found.score, 1.0, abs_tol=0.01)

    # New mail embedded: its message is pooled too, and ranks by its passages once its
    # pooled vector brings it among the candidates.
    vectors.record(
        generation.generation_id, [("acct", seqs[3], [_unit(1, 0.1, 0)])], "acct", seqs[3]
    )
    assert held(SPACE.generation)[0] == [seqs[1], seqs[2], seqs[3]]
    assert [n.seq for n in reader.nearest(SPACE.generation, query, inbox_only, 1)] == [seqs[3]]
    assert [n.seq for n in reader.nearest(SPACE.generation, query, inbox_only, 2)] == [
        seqs[1],
        seqs[3],
    ]

    # A removed message is never named, and leaves the pooled vectors at the next recount.
    store.remove_uids(inbox.folder_id, VALIDITY, [1])
    assert [n.seq for n in reader.nearest(SPACE.generation, query, inbox_only, 2)] == [
        seqs[3],
        seqs[2],
    ]
    now[0] += RECOUNT_SECONDS
    assert held(SPACE.generation)[0] == [seqs[2], seqs[3]]

    # A new generation has pooled vectors of its own; the old one's are untouched.
    other = vectors.open_generation(OTHER, NOW)
    vectors.record(
        other.generation_id, [("acct", seqs[4], [_unit(0, 0, 1), _unit(0, 1, 0)])], "acct", seqs[4]
    )
    assert held(OTHER.generation) == ([seqs[4]], [2], [[0, 0.71, 0.71]])
    assert held(SPACE.generation)[0] == [seqs[2], seqs[3]]
    assert [n.seq for n in reader.nearest(OTHER.generation, query, inbox_only, 5)] == [seqs[4]]
    vectors.finish(other.generation_id, NOW)
    with store.engine.connect() as c:
        assert _held(cache, c, SPACE.generation) is None
