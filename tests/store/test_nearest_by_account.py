"""The nearest messages of a scope of several accounts, on SQLite and PostgreSQL (plain and
partitioned), under the account-scope check every store test runs with: each account's
vectors are read, extended and recounted naming that account, a scope of two accounts ranks
over both accounts' vectors as one ranking, and a scope of one never names the other's mail,
however near it is."""

from __future__ import annotations

import math
import re
from pathlib import Path

import sqlalchemy as sa

from mailfathom.adapters.sql import migrate
from mailfathom.adapters.sql.engine import create_store_engine, sqlite_url
from mailfathom.adapters.sql.passage_store import SqlPassageStore
from mailfathom.adapters.sql.reading import SqlMailboxReader
from mailfathom.adapters.sql.schema import messages
from mailfathom.adapters.sql.sync_store import SqlSyncStore
from mailfathom.adapters.sql.vector_cache import IDLE_SECONDS, RECOUNT_SECONDS, VectorCache
from mailfathom.app.shared.stored_mail import SummaryFilter
from mailfathom.app.sync.types import FolderRecord
from mailfathom.domain.config import AccountConfig, AccountKind, FolderMapping
from mailfathom.domain.embedding import ProfileIdentity
from mailfathom.domain.folders import FolderRole
from store.sqlite_plans import plan_steps, statements_of

from .builders import BASE, new_message, normalized

VALIDITY = 7
SPACE = ProfileIdentity("hashed-words", "1", 3)
QUERY = [1.0, 0.0, 0.0]


def _unit(*values: float) -> list[float]:
    norm = math.sqrt(sum(v * v for v in values))
    return [v / norm for v in values]


def _inbox(store: SqlSyncStore, account_id: str, uids: range) -> tuple[FolderRecord, list[int]]:
    """An account whose inbox holds `uids` (sent by distinct senders), and their `seq`s."""
    store.ensure_account(
        AccountConfig(
            account_id=account_id, display_name=account_id, kind=AccountKind.LOCAL, folders=()
        )
    )
    inbox = store.ensure_folder(account_id, FolderMapping("INBOX", "INBOX", FolderRole.INBOX))
    store.add_messages(
        inbox,
        VALIDITY,
        [
            new_message(
                uid,
                normalized(
                    f"S{uid}",
                    message_id=f"{uid}.{account_id}@x",
                    sender=f"sender{uid}@example.org",
                ),
            )
            for uid in uids
        ],
        BASE,
    )
    with store.engine.connect() as c:
        found = c.execute(
            sa.select(messages.c.uid, messages.c.seq).where(
                messages.c.account_id == account_id, messages.c.folder_id == inbox.folder_id
            )
        )
        seqs = {int(uid): int(seq) for uid, seq in found}
    return inbox, [seqs[u] for u in uids]


def test_a_scope_of_two_accounts_ranks_over_both_and_one_names_only_its_own(
    store: SqlSyncStore,
) -> None:
    first, (a1, a2, a3) = _inbox(store, "first", range(1, 4))
    second, (b1, b2, b3) = _inbox(store, "second", range(1, 4))
    vectors = SqlPassageStore(store.engine)
    generation = vectors.open_generation(SPACE, BASE).generation_id
    vectors.record(
        generation,
        [
            ("first", a1, [_unit(1, 0.05, 0)]),
            ("first", a2, [_unit(0, 1, 0), _unit(1, 0.3, 0)]),
            ("first", a3, [_unit(0, 0, 1)]),
        ],
        "first",
        a3,
    )
    vectors.record(
        generation,
        [("second", b1, [_unit(1, 0, 0)]), ("second", b2, [_unit(1, 0.2, 0)])],
        "second",
        b2,
    )
    both = SummaryFilter(folder_ids=(first.folder_id, second.folder_id))
    only_first = SummaryFilter(folder_ids=(first.folder_id,))
    only_second = SummaryFilter(folder_ids=(second.folder_id,))
    exact = SqlMailboxReader(store.engine)
    # Over many messages the candidates are picked by pooled vector over the whole scope.
    pooled = SqlMailboxReader(
        store.engine, vectors=VectorCache(exact_messages=0, candidates=2, per_message=1)
    )
    for reader in (exact, pooled):
        found = reader.nearest(SPACE.generation, QUERY, both, 4)
        assert [n.seq for n in found][:4] == [b1, a1, b2, a2]
        assert math.isclose(found[0].score, 1.0, abs_tol=0.01)
        assert [n.seq for n in reader.nearest(SPACE.generation, QUERY, both, 2)] == [b1, a1]
        assert [n.seq for n in reader.nearest(SPACE.generation, QUERY, only_first, 5)] == [
            a1,
            a2,
            a3,
        ]
        assert [n.seq for n in reader.nearest(SPACE.generation, QUERY, only_second, 5)] == [
            b1,
            b2,
        ]
    # A selective filter over both accounts leaves the message it names in each.
    chosen = SummaryFilter(folder_ids=both.folder_ids, sender_address="sender2@example.org")
    assert [n.seq for n in exact.nearest(SPACE.generation, QUERY, chosen, 5)] == [b2, a2]
    # Mail embedded later in one account is seen in that account's ranking alone.
    vectors.record(generation, [("second", b3, [_unit(1, 0.01, 0)])], "second", b3)
    assert [n.seq for n in exact.nearest(SPACE.generation, QUERY, both, 3)] == [b1, b3, a1]
    assert [n.seq for n in exact.nearest(SPACE.generation, QUERY, only_first, 1)] == [a1]
    with exact.snapshot() as view:
        pending = view.start_nearest(SPACE.generation, QUERY, only_first, 5)
        assert [n.seq for n in pending.result()] == [a1, a2, a3]


def test_an_older_snapshot_recounts_each_account_s_vectors(store: SqlSyncStore) -> None:
    """A search on a snapshot older than the matrix, once `RECOUNT_SECONDS` have passed,
    counts the rows it can see of each account: a removal among them makes that account's
    vectors be read again, as that snapshot holds them."""
    first, (a1, a2, a3) = _inbox(store, "first", range(1, 4))
    second, (b1,) = _inbox(store, "second", range(1, 2))
    vectors = SqlPassageStore(store.engine)
    generation = vectors.open_generation(SPACE, BASE).generation_id
    vectors.record(
        generation,
        [("first", a1, [_unit(1, 0, 0)]), ("first", a2, [_unit(1, 0.2, 0)])],
        "first",
        a2,
    )
    vectors.record(generation, [("second", b1, [_unit(1, 0.1, 0)])], "second", b1)
    now = [0.0]
    cache = VectorCache(lambda: now[0])
    read_engine = create_store_engine(
        store.engine.url.render_as_string(hide_password=False), read_only=True
    )
    reader = SqlMailboxReader(read_engine, vectors=cache)
    both = SummaryFilter(folder_ids=(first.folder_id, second.folder_id))
    try:
        assert [n.seq for n in reader.nearest(SPACE.generation, QUERY, both, 5)] == [a1, b1, a2]
        store.remove_uids(first.folder_id, VALIDITY, [1])
        with reader.snapshot() as older:
            assert [n.seq for n in older.nearest(SPACE.generation, QUERY, both, 5)] == [b1, a2]
            vectors.record(generation, [("first", a3, [_unit(1, 0.01, 0)])], "first", a3)
            # A newer snapshot extends the first account's vectors (no recount is due).
            assert [n.seq for n in reader.nearest(SPACE.generation, QUERY, both, 5)] == [
                a3,
                b1,
                a2,
            ]
            # The older one answers from them as they are: the removed message is checked
            # away, the newer vector is of a message it holds too.
            assert [n.seq for n in older.nearest(SPACE.generation, QUERY, both, 5)] == [
                a3,
                b1,
                a2,
            ]
            now[0] += RECOUNT_SECONDS
            # Recounted: the removal is seen, so the first account's vectors are read again
            # as this snapshot holds them, without the one embedded since.
            assert [n.seq for n in older.nearest(SPACE.generation, QUERY, both, 5)] == [b1, a2]
        assert [n.seq for n in reader.nearest(SPACE.generation, QUERY, both, 5)] == [a3, b1, a2]
    finally:
        read_engine.dispose()


READS_VECTORS = re.compile(r"^(?:SEARCH|SCAN) passage_vectors\b")
BY_ACCOUNT = " INDEX ix_passage_vectors_account (generation_id=? AND account_id=?"


def test_each_account_s_vectors_are_read_from_its_range_of_the_index(tmp_path: Path) -> None:
    """SQLite's own plans (PostgreSQL chooses by its statistics): the highest vector id, the
    rows past those held and the recounts of each account read that account's range of
    `ix_passage_vectors_account`, never every account's rows of the generation."""
    engine = create_store_engine(sqlite_url(tmp_path / "store.sqlite3"))
    migrate.upgrade(engine)
    store = SqlSyncStore(engine)
    first, (a1, a2) = _inbox(store, "first", range(1, 3))
    second, (b1,) = _inbox(store, "second", range(1, 2))
    vectors = SqlPassageStore(engine)
    generation = vectors.open_generation(SPACE, BASE).generation_id
    vectors.record(generation, [("first", a1, [_unit(1, 0, 0)])], "first", a1)
    vectors.record(generation, [("second", b1, [_unit(1, 0.1, 0)])], "second", b1)
    now = [0.0]
    reader = SqlMailboxReader(engine, vectors=VectorCache(lambda: now[0]))
    both = SummaryFilter(folder_ids=(first.folder_id, second.folder_id))
    with statements_of(engine, r"\bFROM passage_vectors\b") as seen:
        assert [n.seq for n in reader.nearest(SPACE.generation, QUERY, both, 5)] == [a1, b1]
        vectors.record(generation, [("first", a2, [_unit(1, 0.05, 0)])], "first", a2)
        now[0] += RECOUNT_SECONDS
        assert [n.seq for n in reader.nearest(SPACE.generation, QUERY, both, 5)] == [a1, a2, b1]
    try:
        plans = plan_steps(engine, seen)
        steps = [step for plan in plans for step in plan if READS_VECTORS.match(step)]
    finally:
        engine.dispose()
    # The highest ids (twice, two accounts each), the first reads, the recounts, one extension.
    assert len(steps) >= 11
    assert [s for s in steps if BY_ACCOUNT not in s] == []


NEXT_SPACE = ProfileIdentity("hashed-words", "2", 3)


def test_vectors_of_a_replaced_generation_or_an_idle_account_leave_memory(
    store: SqlSyncStore,
) -> None:
    """Matrices no search has named for `IDLE_SECONDS` leave the cache: a generation a filled
    one replaced, an account no longer searched. A search asking for a generation the store
    no longer holds drops that generation's matrices at once."""
    first, (a1,) = _inbox(store, "first", range(1, 2))
    second, (b1,) = _inbox(store, "second", range(1, 2))
    vectors = SqlPassageStore(store.engine)
    old = vectors.open_generation(SPACE, BASE).generation_id
    vectors.record(old, [("first", a1, [_unit(1, 0, 0)])], "first", a1)
    vectors.record(old, [("second", b1, [_unit(1, 0.1, 0)])], "second", b1)
    now = [0.0]
    cache = VectorCache(lambda: now[0])
    reader = SqlMailboxReader(store.engine, vectors=cache)
    only_first = SummaryFilter(folder_ids=(first.folder_id,))
    only_second = SummaryFilter(folder_ids=(second.folder_id,))
    both = SummaryFilter(folder_ids=(first.folder_id, second.folder_id))
    assert [n.seq for n in reader.nearest(SPACE.generation, QUERY, both, 5)] == [a1, b1]
    assert cache.held() == {(SPACE.generation, "first"), (SPACE.generation, "second")}
    cache_of_old = VectorCache(lambda: 0.0)  # another process, whose clock stands still
    old_reader = SqlMailboxReader(store.engine, vectors=cache_of_old)
    assert [n.seq for n in old_reader.nearest(SPACE.generation, QUERY, only_first, 5)] == [a1]
    new = vectors.open_generation(NEXT_SPACE, BASE).generation_id
    vectors.record(new, [("first", a1, [_unit(1, 0, 0)])], "first", a1)
    vectors.record(new, [("second", b1, [_unit(1, 0.1, 0)])], "second", b1)
    vectors.finish(new, BASE)
    assert [n.seq for n in reader.nearest(NEXT_SPACE.generation, QUERY, both, 5)] == [a1, b1]
    assert len(cache.held()) == 4
    # Only the second account is named again within IDLE_SECONDS.
    now[0] += IDLE_SECONDS / 2
    assert [n.seq for n in reader.nearest(NEXT_SPACE.generation, QUERY, only_second, 5)] == [b1]
    now[0] += IDLE_SECONDS / 2 + 1
    assert [n.seq for n in reader.nearest(NEXT_SPACE.generation, QUERY, only_second, 5)] == [b1]
    assert cache.held() == {(NEXT_SPACE.generation, "second")}
    # The first account's vectors are read again when it is searched again.
    assert [n.seq for n in reader.nearest(NEXT_SPACE.generation, QUERY, only_first, 5)] == [a1]
    # A search of the replaced generation, in a process that held it, finds nothing and
    # drops what was held of it (its matrices were named too recently to have gone idle).
    assert cache_of_old.held() == {(SPACE.generation, "first")}
    assert old_reader.nearest(SPACE.generation, QUERY, both, 5) == []
    assert cache_of_old.held() == set()
