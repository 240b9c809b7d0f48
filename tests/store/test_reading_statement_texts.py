"""On PostgreSQL a read sends each of its statements with one text, whatever the lengths of
the lists it names (accounts, folders, `seq`s, identifiers, conversations).

A list written `IN (...)` is expanded into one parameter per value: SQLAlchemy renders the
statement again at every execution, and each length is another statement for PostgreSQL to
parse and plan (psycopg prepares each text apart). The read side passes a list as one array
parameter there instead (`= ANY (...)`), and orders the copies of a message by the position
of their folder in one array rather than by a `CASE` of two parameters per folder. Each read
here runs twice, once with short lists and once with long ones but otherwise alike, and
must send the same statements both times, none of them expanded at execution.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
import sqlalchemy as sa

from mailfathom.adapters.sql.folder_catalog import FolderCatalog
from mailfathom.adapters.sql.reading import SqlMailboxReader
from mailfathom.adapters.sql.schema import messages
from mailfathom.adapters.sql.sync_store import SqlSyncStore
from mailfathom.app.shared.stored_mail import SummaryFilter
from mailfathom.app.sync.types import FolderRecord
from mailfathom.domain.folders import FolderRole

from .reading_builders import Mail, add_folder, at, store_mail

ACCOUNTS = ("a1", "a2", "a3")
REPLIES = 40
# Carried by the subject of every reply (most of the mail: a word without weight) and by the
# body of the first half of them (a word to rank by).
COMMON, RARE = "ibis", "heron"

Read = Callable[[SqlMailboxReader], object]


@dataclass(frozen=True)
class Mailboxes:
    """Each account's INBOX holds REPLIES replies, each to a message of its own kept in
    Parked; a1's replies are kept in seven labels too (copies, which a read merges)."""

    inbox: dict[str, FolderRecord]
    labels: tuple[FolderRecord, ...]
    # Of each account's replies, by their position: (seq, stored_email_id, thread_id).
    replies: dict[str, list[tuple[int, uuid.UUID, uuid.UUID]]]

    def one(self) -> tuple[int, ...]:
        return (self.inbox["a1"].folder_id,)

    def spread(self) -> tuple[int, ...]:
        """One folder in each account: nothing to merge."""
        return tuple(self.inbox[a].folder_id for a in ACCOUNTS)

    def two_labels(self) -> tuple[int, ...]:
        return (self.inbox["a1"].folder_id, self.labels[0].folder_id)

    def wide(self) -> tuple[int, ...]:
        return (*self.two_labels(), *(f.folder_id for f in self.labels[1:]), *self.spread()[1:])

    def across(self, column: int) -> list[Any]:
        """Column `column` of REPLIES replies, taken in turn from each account."""
        return [self.replies[ACCOUNTS[i % 3]][i // 3][column] for i in range(REPLIES)]


def _key(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.fixture
def mailboxes(postgres_engine: sa.Engine) -> Mailboxes:
    store = SqlSyncStore(postgres_engine)
    inbox: dict[str, FolderRecord] = {}
    labels: list[FolderRecord] = []
    for account in ACCOUNTS:
        inbox[account] = add_folder(store, "INBOX", account_id=account, role=FolderRole.INBOX)
        parked = add_folder(store, "Parked", account_id=account)
        store_mail(
            store,
            parked,
            *(Mail(f"plan {i}", received=at(i), message_id=f"p{i}@{account}") for i in range(40)),
        )
        replies = [
            Mail(
                f"{COMMON} {i}",
                received=at(100 + i),
                body=RARE if i < REPLIES // 2 else "plain",
                message_id=f"r{i}@{account}",
                references=(f"p{i}@{account}",),
                key=_key(f"{account} {i}"),
            )
            for i in range(REPLIES)
        ]
        store_mail(store, inbox[account], *replies)
        if account == "a1":
            for n in range(1, 8):
                label = add_folder(store, f"Label{n}", account_id=account)
                store_mail(store, label, *replies)
                labels.append(label)
    found: dict[str, list[tuple[int, uuid.UUID, uuid.UUID]]] = {}
    with postgres_engine.connect() as c:
        rows = c.execute(
            sa.select(
                messages.c.account_id,
                messages.c.seq,
                messages.c.stored_email_id,
                messages.c.thread_id,
            )
            .where(messages.c.folder_id.in_([f.folder_id for f in inbox.values()]))
            .order_by(messages.c.seq)
        )
        for account, seq, stored_email_id, thread_id in rows:
            found.setdefault(account, []).append((seq, stored_email_id, thread_id))
    return Mailboxes(inbox, tuple(labels), found)


@dataclass
class Sent:
    """The statements sent while a read ran, with their parameters, and those SQLAlchemy
    expanded to send them."""

    texts: list[str]
    parameters: list[Any]
    expanded: list[str]

    def of_folders(self) -> list[tuple[str, Any]]:
        return [
            (t, p) for t, p in zip(self.texts, self.parameters, strict=True) if "FROM folders" in t
        ]


def _sent(engine: sa.Engine, read: Read, catalog: FolderCatalog | None = None) -> Sent:
    """What `read` sends through a reader of its own (which reads the folders afresh)."""
    sent = Sent([], [], [])

    def seen(_c: Any, _cursor: Any, statement: str, bound: Any, context: Any, _many: Any) -> None:
        sent.texts.append(statement)
        sent.parameters.append(bound)
        # A fixed read (fixed_reads) runs without an execution context: never expanded.
        compiled = None if context is None else context.compiled
        if compiled is not None and (
            compiled.post_compile_params or compiled.literal_execute_params
        ):
            sent.expanded.append(statement)

    sa.event.listen(engine, "before_cursor_execute", seen)
    try:
        read(SqlMailboxReader(engine, catalog=catalog))
    finally:
        sa.event.remove(engine, "before_cursor_execute", seen)
    return sent


def _one_text_each(engine: sa.Engine, short: Read, long: Read) -> None:
    shorter, longer = _sent(engine, short), _sent(engine, long)
    assert shorter.expanded == []
    assert longer.expanded == []
    assert len(shorter.texts) == len(longer.texts)
    assert set(shorter.texts) - set(longer.texts) == set()
    assert set(longer.texts) - set(shorter.texts) == set()


def _listing(folders: tuple[int, ...], limit: int, **filters: Any) -> Read:
    selection = SummaryFilter(folder_ids=folders, **filters)
    return lambda r: r.summaries(selection, newest_first=True, after=None, limit=limit)


def _search(folders: tuple[int, ...], word: str, limit: int) -> Read:
    return lambda r: r.search(SummaryFilter(folder_ids=folders), [word], limit)


@pytest.mark.parametrize("merging", [False, True])
def test_a_listing_sends_one_text_for_one_account_or_three(
    postgres_engine: sa.Engine, mailboxes: Mailboxes, merging: bool
) -> None:
    m = mailboxes
    short, long = (m.two_labels(), m.wide()) if merging else (m.one(), m.spread())
    _one_text_each(postgres_engine, _listing(short, 1), _listing(long, REPLIES))
    to = "owner@example.net"
    _one_text_each(
        postgres_engine,
        _listing(short, 1, recipient_address=to, seen=False),
        _listing(long, REPLIES, recipient_address=to, seen=False),
    )


@pytest.mark.parametrize("word", [COMMON, RARE])
@pytest.mark.parametrize("merging", [False, True])
def test_a_search_sends_one_text_for_one_folder_or_many(
    postgres_engine: sa.Engine, mailboxes: Mailboxes, merging: bool, word: str
) -> None:
    m = mailboxes
    short, long = (m.two_labels(), m.wide()) if merging else (m.one(), m.spread())
    _one_text_each(postgres_engine, _search(short, word, 1), _search(long, word, REPLIES))


def test_named_emails_are_read_with_one_text_for_one_or_forty(
    postgres_engine: sa.Engine, mailboxes: Mailboxes
) -> None:
    m = mailboxes
    _one_text_each(
        postgres_engine,
        lambda r: r.emails([m.replies["a1"][0][1]], m.one()),
        lambda r: r.emails(m.across(1), m.wide()),
    )


def test_conversations_are_read_with_one_text_for_one_or_forty(
    postgres_engine: sa.Engine, mailboxes: Mailboxes
) -> None:
    m = mailboxes
    # The parents lie outside the scope: the read looks their copies up by `seq` as well.
    _one_text_each(
        postgres_engine,
        lambda r: r.threads([m.replies["a1"][0][2]], m.one()),
        lambda r: r.threads(m.across(2), m.wide()),
    )


def test_named_rows_and_their_texts_are_read_with_one_text_for_one_or_forty(
    postgres_engine: sa.Engine, mailboxes: Mailboxes
) -> None:
    m = mailboxes
    first = [m.replies["a1"][0][0]]
    _one_text_each(
        postgres_engine,
        lambda r: r.summaries_of(first, SummaryFilter(folder_ids=m.two_labels())),
        lambda r: r.summaries_of(m.across(0), SummaryFilter(folder_ids=m.wide())),
    )
    _one_text_each(
        postgres_engine,
        lambda r: r.indexed_texts(first, m.one()),
        lambda r: r.indexed_texts(m.across(0), m.spread()),
    )


def test_the_visible_folders_are_read_with_one_text_for_three_accounts_or_one(
    postgres_engine: sa.Engine, mailboxes: Mailboxes
) -> None:
    catalog = FolderCatalog()
    every = _sent(postgres_engine, lambda r: r.readable_folders(ACCOUNTS), catalog)
    add_folder(SqlSyncStore(postgres_engine), "Later", account_id="a2")
    moved = _sent(postgres_engine, lambda r: r.readable_folders(ACCOUNTS), catalog)
    assert every.expanded == []
    assert moved.expanded == []
    ((first, every_account),) = every.of_folders()
    ((again, one_account),) = moved.of_folders()
    assert first == again
    assert "a1" in str(every_account)
    assert "a3" in str(every_account)
    assert "a1" not in str(one_account)
