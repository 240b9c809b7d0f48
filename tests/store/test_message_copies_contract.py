"""One message kept in several folders of one account is read once, on SQLite and PostgreSQL.

Gmail lists a message in a folder per label it carries, byte for byte the same, so the copies
share their content key (the SHA-256 of the octets). A listing or a search over several
folders returns one entry per message, from the first of its folders in the request's scope
(INBOX, then the order the folders were first mapped in) whose copy passes the request's
filters (test_message_copies_filters_contract), naming the other folders of the scope that
hold it; a conversation lists each message once. A folder read alone lists its own copies.
Every mailbox here is written through `SqlSyncStore`, the writer synchronization uses.
"""

from __future__ import annotations

import hashlib

import pytest
import sqlalchemy as sa

from mailfathom.adapters.sql.passage_store import SqlPassageStore
from mailfathom.adapters.sql.schema import messages
from mailfathom.adapters.sql.sync_store import SqlSyncStore
from mailfathom.app.shared.stored_mail import SummaryFilter, SummaryRow, TimelinePosition
from mailfathom.app.shared.stored_mail_ports import MailboxReadStore
from mailfathom.app.sync.types import FolderRecord
from mailfathom.domain.content_state import ContentState
from mailfathom.domain.embedding import ProfileIdentity
from mailfathom.domain.folders import FolderRole

from .reading_builders import Mail, add_folder, at, store_mail
from .test_mailbox_reader_contract import reader as reader

SPACE = ProfileIdentity("plane", "1", 2)


def key(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()


def _in(*folders: FolderRecord, **filters: object) -> SummaryFilter:
    return SummaryFilter(folder_ids=tuple(f.folder_id for f in folders), **filters)  # type: ignore[arg-type]


def _entries(rows: list[SummaryRow]) -> list[tuple[str | None, str, tuple[str, ...]]]:
    return [(r.subject, r.folder_alias, r.other_folder_aliases) for r in rows]


def _listed(reader: MailboxReadStore, selection: SummaryFilter) -> list[SummaryRow]:
    return reader.summaries(selection, newest_first=True, after=None, limit=100)


class Gmail:
    """Work mapped before INBOX (so the INBOX comes first by its role, not by its id), then
    All Mail, Sent Mail, and a second account holding the same octets as the first."""

    def __init__(self, store: SqlSyncStore) -> None:
        self.work = add_folder(store, "Work")
        self.inbox = add_folder(store, "INBOX", role=FolderRole.INBOX)
        self.all = add_folder(store, "[Gmail]/All Mail", alias="All Mail", role=FolderRole.ALL)
        self.sent = add_folder(store, "[Gmail]/Sent Mail", alias="Sent", role=FolderRole.SENT)
        self.other = add_folder(store, "INBOX", account_id="other", alias="Elsewhere")

    def folders(self) -> tuple[FolderRecord, ...]:
        return (self.work, self.inbox, self.all, self.sent, self.other)


def _filed(store: SqlSyncStore) -> Gmail:
    g = Gmail(store)
    labelled = Mail("labelled", received=at(5), message_id="l@x", key=key("labelled"))
    only_work = Mail("only work", received=at(4), message_id="w@x", key=key("only work"))
    archived = Mail("archived", received=at(3), message_id="a@x", key=key("archived"))
    # The same Message-ID as the labelled one, other octets: another message.
    lookalike = Mail("lookalike", received=at(2), message_id="l@x", key=key("lookalike"))
    twice = Mail("twice in work", received=at(1), message_id="t@x", key=key("twice"))
    store_mail(store, g.inbox, labelled)
    store_mail(store, g.work, labelled, only_work, twice, twice)
    store_mail(store, g.all, labelled, only_work, archived, lookalike, twice)
    store_mail(store, g.other, labelled)
    return g


def test_a_listing_over_several_folders_lists_each_message_once_from_its_first_folder(
    store: SqlSyncStore, reader: MailboxReadStore
) -> None:
    g = _filed(store)
    assert _entries(_listed(reader, _in(*g.folders()))) == [
        # Received at the same time: the one stored last first.
        ("labelled", "Elsewhere", ()),
        ("labelled", "INBOX", ("Work", "All Mail")),
        ("only work", "Work", ("All Mail",)),
        ("archived", "All Mail", ()),
        ("lookalike", "All Mail", ()),
        # Two copies in one folder are that folder's own two messages.
        ("twice in work", "Work", ("All Mail",)),
        ("twice in work", "Work", ("All Mail",)),
    ]


def test_a_folder_read_alone_lists_its_own_copies(
    store: SqlSyncStore, reader: MailboxReadStore
) -> None:
    g = _filed(store)
    work = _listed(reader, _in(g.work))
    assert _entries(work) == [
        ("labelled", "Work", ()),
        ("only work", "Work", ()),
        ("twice in work", "Work", ()),
        ("twice in work", "Work", ()),
    ]
    assert {r.folder_id for r in work} == {g.work.folder_id}
    assert _entries(_listed(reader, _in(g.work, g.all))) == [
        ("labelled", "Work", ("All Mail",)),
        ("only work", "Work", ("All Mail",)),
        ("archived", "All Mail", ()),
        ("lookalike", "All Mail", ()),
        ("twice in work", "Work", ("All Mail",)),
        ("twice in work", "Work", ("All Mail",)),
    ]


def test_mail_whose_content_is_not_held_is_never_taken_for_another(
    store: SqlSyncStore, reader: MailboxReadStore
) -> None:
    g = Gmail(store)
    big = Mail("big", message_id="big@x", state=ContentState.EXCEEDED_SIZE_LIMIT)
    store_mail(store, g.inbox, big)
    store_mail(store, g.all, big)
    assert sorted(_entries(_listed(reader, _in(g.inbox, g.all)))) == [
        ("big", "All Mail", ()),
        ("big", "INBOX", ()),
    ]


@pytest.mark.parametrize("size", [1, 2, 3, 5])
@pytest.mark.parametrize("newest_first", [True, False], ids=["newest", "oldest"])
def test_pages_over_copies_are_full_and_walk_every_message_once(
    store: SqlSyncStore, reader: MailboxReadStore, size: int, newest_first: bool
) -> None:
    g = Gmail(store)
    expected: list[str] = []
    for n in range(12):
        name = f"m{n:02d}"
        received = None if n % 5 == 4 else at(n % 7)
        mail = Mail(name, received=received, key=key(name))
        folders = [g.all] + ([g.inbox] if n % 2 == 0 else []) + ([g.work] if n % 3 == 0 else [])
        for folder in folders:
            store_mail(store, folder, mail, first_uid=100 + n)
        expected.append(name)
    selection = _in(g.inbox, g.work, g.all)
    seen: list[str | None] = []
    after: TimelinePosition | None = None
    while True:
        page = reader.summaries(selection, newest_first=newest_first, after=after, limit=size)
        seen.extend(r.subject for r in page)
        if len(page) < size:
            break
        after = TimelinePosition(page[-1].received_at, page[-1].seq)
    assert sorted(s or "" for s in seen) == expected
    assert len(seen) == len(expected)
    whole = [r.subject for r in reader.summaries(selection, newest_first=newest_first,
                                                   after=None, limit=100)]  # fmt: skip
    assert seen == whole


def test_a_search_over_several_folders_finds_each_message_once(
    store: SqlSyncStore, reader: MailboxReadStore
) -> None:
    g = _filed(store)
    # Enough mail without the words that neither is a common word (ranked by the index).
    store_mail(store, g.work, *(Mail(f"filler {i}", body="nothing") for i in range(12)),
               first_uid=1000)  # fmt: skip
    heron = Mail("heron", body="a heron at the lake", key=key("heron"), received=at(20))
    store_mail(store, g.inbox, heron, first_uid=50)
    store_mail(store, g.work, heron, first_uid=50)
    store_mail(store, g.all, heron, first_uid=50)
    found = reader.search(_in(g.inbox, g.work, g.all), ["heron"], 50)
    assert [(r.summary.folder_alias, r.summary.other_folder_aliases) for r in found] == [
        ("INBOX", ("Work", "All Mail"))
    ]
    labelled = reader.search(_in(*g.folders()), ["labelled"], 50)
    assert sorted(r.summary.folder_alias for r in labelled) == ["Elsewhere", "INBOX"]
    alone = reader.search(_in(g.all), ["heron"], 50)
    assert [(r.summary.folder_alias, r.summary.other_folder_aliases) for r in alone] == [
        ("All Mail", ())
    ]


def test_a_search_of_words_most_mail_carries_finds_each_message_once(
    store: SqlSyncStore, reader: MailboxReadStore
) -> None:
    g = Gmail(store)
    for n in range(4):
        mail = Mail(f"common {n}", body="common", key=key(f"common {n}"), received=at(n))
        store_mail(store, g.inbox, mail, first_uid=n + 1)
        store_mail(store, g.all, mail, first_uid=n + 1)
    rows = reader.search(_in(g.inbox, g.all), ["common"], 3)
    assert {r.rank for r in rows} == {0.0}
    assert [(r.summary.subject, r.summary.folder_alias) for r in rows] == [
        ("common 3", "INBOX"),
        ("common 2", "INBOX"),
        ("common 1", "INBOX"),
    ]


def test_a_conversation_lists_each_message_once_under_the_copy_that_stands_for_it(
    store: SqlSyncStore, reader: MailboxReadStore
) -> None:
    g = Gmail(store)
    question = Mail("plan", message_id="q@x", sent=at(0), received=at(0), key=key("plan"))
    answer = Mail(
        "Re: plan",
        message_id="r@x",
        references=("q@x",),
        sent=at(10),
        received=at(10),
        sender="owner@example.net",
        key=key("Re: plan"),
    )
    # The reply hangs under whichever copy of the question conversations place first, which
    # need not be the one a listing shows; each folder read alone has a copy of its own.
    store_mail(store, g.all, question, answer)
    store_mail(store, g.inbox, question)
    store_mail(store, g.work, question)
    store_mail(store, g.sent, answer)
    listed = {r.subject: r for r in _listed(reader, _in(g.inbox, g.work, g.all, g.sent))}
    assert set(listed) == {"plan", "Re: plan"}
    thread_id = listed["plan"].thread_id
    assert thread_id is not None
    members = reader.thread(thread_id, [f.folder_id for f in g.folders()])
    assert [m.subject for m in members] == ["plan", "Re: plan"]
    assert [m.seq for m in members] == [listed["plan"].seq, listed["Re: plan"].seq]
    assert [m.parent_seq for m in members] == [None, listed["plan"].seq]
    assert [len(m.copies) for m in members] == [2, 1]
    copies = {
        r.seq for f in (g.work, g.all) for r in _listed(reader, _in(f)) if r.subject == "plan"
    }
    assert set(members[0].copies) == copies
    # Read from All Mail alone, the conversation is All Mail's own copies.
    alone = reader.thread(thread_id, [g.all.folder_id])
    assert [(m.subject, m.copies) for m in alone] == [("plan", ()), ("Re: plan", ())]
    assert alone[1].parent_seq == alone[0].seq
    assert reader.threads([thread_id], [g.inbox.folder_id, g.sent.folder_id])[thread_id][
        1
    ].parent_seq == (listed["plan"].seq)


def test_the_nearest_messages_over_several_folders_are_each_message_once(
    store: SqlSyncStore, reader: MailboxReadStore
) -> None:
    """Every copy is embedded as its own row; the vector ranking names the message once, by
    the copy that stands for it, as the lexical ranking does."""
    g = _filed(store)
    vectors = SqlPassageStore(store.engine)
    generation = vectors.open_generation(SPACE, at(30))
    with store.engine.connect() as c:
        rows = [
            (str(a), int(s)) for a, s in c.execute(sa.select(messages.c.account_id, messages.c.seq))
        ]
    vectors.record(
        generation.generation_id,
        [(a, s, [[1.0, 0.0]]) for a, s in rows],
        "acct",
        max(s for _, s in rows),
    )
    query = [1.0, 0.0]
    found = reader.nearest(SPACE.generation, query, _in(g.inbox, g.work, g.all), 50)
    seqs = [n.seq for n in found]
    assert len(seqs) == len(set(seqs))
    named = reader.summaries_of(seqs, _in(g.inbox, g.work, g.all))
    subjects = sorted(named[s].subject or "" for s in seqs)
    assert subjects == sorted(
        ["labelled", "only work", "archived", "lookalike", "twice in work", "twice in work"]
    )
    assert named[seqs[[named[s].subject for s in seqs].index("labelled")]].folder_alias == "INBOX"
    alone = reader.nearest(SPACE.generation, query, _in(g.all), 50)
    assert len(alone) == 5
