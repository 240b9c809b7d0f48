"""Which words are common enough to carry no weight (`reading_search.CommonWords`): counted
again whenever the lexical index changed, a document replaced in place included, and on
PostgreSQL over the accounts a search names, not over every account's mail."""

from __future__ import annotations

import sqlalchemy as sa

from mailfathom.adapters.sql import migrate, search_index
from mailfathom.adapters.sql.reading_search import CommonWords
from mailfathom.adapters.sql.schema import messages
from mailfathom.adapters.sql.search_index import IndexDocument
from mailfathom.adapters.sql.sync_store import SqlSyncStore

from .builders import BASE, inbox_and_junk, new_message, normalized

VALIDITY = 7


def _inbox(store: SqlSyncStore, account_id: str, subjects: list[str]) -> list[int]:
    """An account whose inbox holds one message per subject; their `seq`s, in order."""
    inbox, _junk = inbox_and_junk(store, account_id)
    store.add_messages(
        inbox,
        VALIDITY,
        [
            new_message(uid, normalized(subject, message_id=f"{uid}.{account_id}@x"))
            for uid, subject in enumerate(subjects, start=1)
        ],
        BASE,
    )
    with store.engine.connect() as c:
        found = c.execute(
            sa.select(messages.c.uid, messages.c.seq).where(messages.c.account_id == account_id)
        )
        seqs = {int(uid): int(seq) for uid, seq in found}
    return [seqs[uid] for uid in range(1, len(subjects) + 1)]


def _common(store: SqlSyncStore, common: CommonWords, word: str, accounts: list[str]) -> bool:
    with store.engine.connect() as c:
        return common.all_common(c, [word], accounts)


def test_a_document_replaced_in_place_is_counted_again(store: SqlSyncStore) -> None:
    seqs = _inbox(store, "first", ["alpha one", "beta two", "gamma three", "delta four"])
    common = CommonWords()
    assert not _common(store, common, "alpha", ["first"])
    # Two documents gain the word where they are: as many rows as before, the same highest.
    with store.engine.begin() as c:
        for seq in seqs[1:3]:
            search_index.replace_document(
                c, IndexDocument("first", seq, "alpha again", "sender@example.org", "")
            )
    assert _common(store, common, "alpha", ["first"])


def test_a_word_common_in_the_searched_account_is_weighed_as_the_store_weighs_it(
    store: SqlSyncStore,
) -> None:
    """PostgreSQL counts over the accounts searched; FTS5's bm25 weighs a word over the whole
    index, and SQLite's rule follows it."""
    _inbox(store, "first", ["alpha one", "alpha two"])
    _inbox(store, "second", [f"other {n}" for n in range(6)])
    common = CommonWords()
    postgresql = store.engine.dialect.name == "postgresql"
    assert _common(store, common, "alpha", ["first"]) is postgresql
    assert not _common(store, common, "alpha", ["first", "second"])
    assert not _common(store, common, "alpha", ["second"])
    assert _common(store, common, "other", ["second"])
    assert _common(store, common, "other", ["first", "second"])


def test_0036_counts_each_account_s_rows_when_it_arrives(store: SqlSyncStore) -> None:
    _inbox(store, "first", ["alpha one", "alpha two", "beta three"])
    _inbox(store, "second", ["gamma one", "gamma two"])
    migrate.downgrade(store.engine, "0035_passage_vectors_by_account")
    migrate.upgrade(store.engine)
    common = CommonWords()
    if store.engine.dialect.name == "postgresql":
        with store.engine.connect() as c:
            found = c.execute(sa.text("SELECT account_id, rows FROM search_versions"))
            counted = {str(account): int(rows) for account, rows in found}
        assert counted == {"first": 3, "second": 2}
        assert _common(store, common, "alpha", ["first"])
    assert not _common(store, common, "alpha", ["first", "second"])
    # Changes after the revision still move the state the words were counted in.
    _inbox(store, "third", ["alpha three", "alpha four", "alpha five"])
    assert _common(store, common, "alpha", ["first", "second", "third"])


def test_removed_messages_leave_the_counts_and_move_the_state(store: SqlSyncStore) -> None:
    """Messages removed from a folder take their index rows with them (on PostgreSQL by the
    cascade from `messages`): the counts fall, and a word counted before is counted again."""
    _inbox(store, "first", ["alpha one", "beta two", "beta three", "beta four"])
    common = CommonWords()
    assert not _common(store, common, "alpha", ["first"])
    with store.engine.connect() as c:
        inbox = c.execute(
            sa.select(messages.c.folder_id).where(messages.c.account_id == "first").limit(1)
        ).scalar_one()
    store.remove_uids(inbox, VALIDITY, [3, 4])
    if store.engine.dialect.name == "postgresql":
        with store.engine.connect() as c:
            rows = c.execute(
                sa.text("SELECT rows FROM search_versions WHERE account_id = 'first'")
            ).scalar_one()
        assert rows == 2
    assert _common(store, common, "alpha", ["first"])
