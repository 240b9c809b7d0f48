"""Revision 0034 keeps the embedding backfill's position per account: a generation's position
becomes each account's, and going below it gives the generation the lowest of its accounts'
(an account never walked counting 0). The vectors stay both ways: the column is changed in
place, never by copying a table whose rows cascade to them."""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa

from mailfathom.adapters.sql import migrate
from mailfathom.adapters.sql.passage_store import SqlPassageStore
from mailfathom.adapters.sql.schema import passage_vectors
from mailfathom.adapters.sql.sync_store import SqlSyncStore
from mailfathom.domain.embedding import ProfileIdentity

from .builders import inbox_and_junk, new_message, normalized

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
BEFORE = "0033_scoped_outbox_children"
SPACE = ProfileIdentity("hashed-words", "1", 4)
VALIDITY = 9


def _stored(store: SqlSyncStore, account_id: str, uids: range) -> list[int]:
    """Messages of `account_id`, stored now: their `seq`."""
    inbox, _ = inbox_and_junk(store, account_id)
    items = [
        new_message(uid, normalized(f"{account_id} {uid}", message_id=f"{account_id}.{uid}@x"))
        for uid in uids
    ]
    store.add_messages(inbox, VALIDITY, items, NOW)
    with store.engine.connect() as c:
        rows = c.execute(
            sa.text("SELECT seq FROM messages WHERE account_id = :a"), {"a": account_id}
        )
        return sorted(int(s) for s in rows.scalars())


def _after_seq(engine: sa.Engine) -> int:
    with engine.connect() as c:
        return int(c.execute(sa.text("SELECT after_seq FROM embedding_generations")).scalar_one())


def _vectors(engine: sa.Engine) -> int:
    with engine.connect() as c:
        return int(c.execute(sa.select(sa.func.count()).select_from(passage_vectors)).scalar_one())


def test_a_generation_s_position_becomes_each_account_s_and_back(engine: sa.Engine) -> None:
    store = SqlSyncStore(engine)
    alpha, beta = _stored(store, "alpha", range(1, 4)), _stored(store, "beta", range(1, 4))
    vectors = SqlPassageStore(engine)
    generation = vectors.open_generation(SPACE, NOW)
    vectors.record(
        generation.generation_id, [("alpha", alpha[1], [[1.0, 0.0, 0.0, 0.0]])], "alpha", alpha[1]
    )
    vectors.record(
        generation.generation_id, [("beta", beta[2], [[0.0, 1.0, 0.0, 0.0]])], "beta", beta[2]
    )
    assert _vectors(engine) == 2

    # Going down, the generation keeps the lowest position of its accounts.
    migrate.downgrade(engine, BEFORE)
    assert _after_seq(engine) == alpha[1]
    assert _vectors(engine) == 2
    # Coming back, that position is each account's.
    migrate.upgrade(engine)
    assert vectors.open_generation(SPACE, NOW).positions == {"alpha": alpha[1], "beta": alpha[1]}
    assert _vectors(engine) == 2

    # An account that has walked nothing makes it 0.
    _stored(store, "gamma", range(1, 2))
    migrate.downgrade(engine, BEFORE)
    assert _after_seq(engine) == 0
    with engine.begin() as c:
        c.execute(sa.text("UPDATE embedding_generations SET after_seq = :s"), {"s": beta[0]})
    migrate.upgrade(engine)
    positions = vectors.open_generation(SPACE, NOW).positions
    assert positions == dict.fromkeys(("alpha", "beta", "gamma"), beta[0])
    assert _vectors(engine) == 2
