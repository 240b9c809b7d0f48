"""What the reading use cases may rely on from the store's read side, on SQLite and PostgreSQL.

Every mailbox here is written through `SqlSyncStore`, the same writer synchronization uses.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
import sqlalchemy as sa

from mailfathom.adapters.sql.engine import create_store_engine
from mailfathom.adapters.sql.reading import SqlMailboxReader
from mailfathom.adapters.sql.search_index import INDEXED_BODY_CHARACTERS
from mailfathom.adapters.sql.sync_store import SqlSyncStore
from mailfathom.app.shared.stored_mail import (
    FolderView,
    ParticipantRow,
    PartRow,
    StoredFlags,
    SummaryFilter,
    SummaryRow,
    TimelinePosition,
)
from mailfathom.app.shared.stored_mail_ports import MailboxReadStore
from mailfathom.app.sync.types import FlagChange, FolderRecord
from mailfathom.domain.content_state import ContentState, RemoteFlags
from mailfathom.domain.folders import FolderRole
from mailfathom.domain.message import PartDescription, PartKind

from .builders import ATTACHMENT
from .reading_builders import NOW, VALIDITY, Mail, add_folder, at, store_mail

INLINE = PartDescription(
    kind=PartKind.INLINE,
    file_name="logo.png",
    name_was_normalized=True,
    media_type="image/png",
    size_octets=99,
    part_path="3",
    content_id="logo@x",
)


@pytest.fixture
def reader(engine: sa.Engine) -> Iterator[MailboxReadStore]:
    """A reader on an engine of its own, as the server has: on SQLite its transactions
    begin deferred and never take the write lock."""
    read_engine = create_store_engine(
        engine.url.render_as_string(hide_password=False), read_only=True
    )
    yield SqlMailboxReader(read_engine)
    read_engine.dispose()


def _in(*folders: FolderRecord, **filters: Any) -> SummaryFilter:
    return SummaryFilter(folder_ids=tuple(f.folder_id for f in folders), **filters)


def _subjects(rows: list[SummaryRow]) -> list[str | None]:
    return [r.subject for r in rows]


def _listed(reader: MailboxReadStore, selection: SummaryFilter) -> list[str | None]:
    return _subjects(reader.summaries(selection, newest_first=True, after=None, limit=100))


def _found(reader: MailboxReadStore, selection: SummaryFilter, *words: str) -> list[str]:
    return [r.summary.subject or "" for r in reader.search(selection, words, 50)]


def _walk(
    reader: MailboxReadStore, selection: SummaryFilter, *, newest_first: bool, size: int
) -> list[str | None]:
    seen: list[str | None] = []
    after: TimelinePosition | None = None
    for _ in range(100):
        page = reader.summaries(selection, newest_first=newest_first, after=after, limit=size)
        assert len(page) <= size
        seen.extend(_subjects(page))
        if len(page) < size:
            return seen
        after = TimelinePosition(page[-1].received_at, page[-1].seq)
    raise AssertionError(f"paging did not end: {seen[:30]}")


# -- folders ----------------------------------------------------------------------------


def test_readable_folders_are_the_visible_ones_of_the_asked_accounts_by_account_and_alias(
    store: SqlSyncStore, reader: MailboxReadStore
) -> None:
    inbox = add_folder(store, "INBOX", account_id="a", alias="Inbox", role=FolderRole.INBOX)
    archive = add_folder(store, "Arch", account_id="a", alias="Archive", role=FolderRole.ARCHIVE)
    add_folder(store, "Secret", account_id="a", alias="Secret", visible=False)
    main = add_folder(store, "INBOX", account_id="b", alias="Main")
    add_folder(store, "INBOX", account_id="c", alias="Elsewhere")
    store_mail(store, inbox, Mail("hello"))

    assert reader.readable_folders(["b", "a"]) == [
        FolderView(archive.folder_id, "a", "Archive", FolderRole.ARCHIVE, None),
        FolderView(inbox.folder_id, "a", "Inbox", FolderRole.INBOX, NOW),
        FolderView(main.folder_id, "b", "Main", None, None),
    ]
    assert reader.readable_folders([]) == []


def test_a_folder_withheld_after_mail_was_stored_disappears_from_every_answer(
    store: SqlSyncStore, reader: MailboxReadStore
) -> None:
    folder = add_folder(store, "INBOX")
    store_mail(store, folder, Mail("secret plans", body="unicorn", message_id="s@x"))
    (row,) = reader.summaries(_in(folder), newest_first=True, after=None, limit=10)
    assert row.thread_id is not None
    assert len(reader.search(_in(folder), ["unicorn"], 10)) == 1
    assert set(reader.emails([row.stored_email_id], [folder.folder_id])) == {row.stored_email_id}
    assert len(reader.thread(row.thread_id, [folder.folder_id])) == 1
    add_folder(store, "INBOX", visible=False)

    assert reader.readable_folders(["acct"]) == []
    assert reader.summaries(_in(folder), newest_first=True, after=None, limit=10) == []
    assert reader.search(_in(folder), ["unicorn"], 10) == []
    assert reader.emails([row.stored_email_id], [folder.folder_id]) == {}
    assert reader.thread(row.thread_id, [folder.folder_id]) == []


# -- summaries --------------------------------------------------------------------------


def test_a_summary_carries_the_stored_message_as_written(
    store: SqlSyncStore, reader: MailboxReadStore
) -> None:
    folder = add_folder(store, "INBOX", alias="Inbox")
    store_mail(
        store,
        folder,
        Mail(
            "Quarterly report",
            received=at(5),
            sent=at(3),
            sender="Alice@Example.org",
            sender_name="Alice",
            to=("bob@example.net", "carol@example.net"),
            cc=("dave@example.net",),
            flags=RemoteFlags(
                seen=True, answered=True, keywords=frozenset({"Work", "work", "$Label1"})
            ),
            parts=(ATTACHMENT, INLINE),
            message_id="q@x",
            size=4321,
        ),
    )
    (row,) = reader.summaries(_in(folder), newest_first=True, after=None, limit=10)
    assert isinstance(row.stored_email_id, uuid.UUID)
    assert isinstance(row.thread_id, uuid.UUID)
    assert row == SummaryRow(
        seq=row.seq,
        stored_email_id=row.stored_email_id,
        account_id="acct",
        folder_id=folder.folder_id,
        folder_alias="Inbox",
        message_id="q@x",
        thread_id=row.thread_id,
        subject="Quarterly report",
        sender_address="Alice@Example.org",
        sender_name="Alice",
        to_addresses=("bob@example.net", "carol@example.net"),
        sent_at=at(3),
        received_at=at(5),
        size_octets=4321,
        attachment_count=1,
        inline_count=1,
        attachment_octets=1234 + 99,
        is_encrypted=False,
        has_unverified_signature=False,
        has_unexpanded_tnef=False,
        flags=StoredFlags(
            seen=True,
            flagged=False,
            answered=True,
            draft=False,
            deleted=False,
            keywords=("$label1", "work"),
            observed_at=NOW,
        ),
        content_state=ContentState.STORED,
    )
    assert row.received_at is not None
    assert row.received_at.utcoffset() == timedelta(0)


def test_flag_changes_show_in_summaries_with_their_observation_time(
    store: SqlSyncStore, reader: MailboxReadStore
) -> None:
    folder = add_folder(store, "INBOX")
    store_mail(store, folder, Mail("one", flags=RemoteFlags(keywords=frozenset({"old"}))))
    later = NOW + timedelta(hours=2)
    store.apply_flag_changes(
        folder.folder_id,
        VALIDITY,
        [FlagChange(1, RemoteFlags(flagged=True, keywords=frozenset({"New", "$Done"})), 5)],
        later,
    )
    (row,) = reader.summaries(_in(folder), newest_first=True, after=None, limit=10)
    assert (row.flags.flagged, row.flags.seen) == (True, False)
    assert row.flags.keywords == ("$done", "new")
    assert row.flags.observed_at == later


def _timeline(store: SqlSyncStore) -> tuple[FolderRecord, list[str]]:
    """A folder whose received times tie and are sometimes unknown, and its newest-first
    order: by received time, then `seq`, the undated rows last (lowest `seq` last)."""
    folder = add_folder(store, "INBOX")
    other = add_folder(store, "Other")
    store_mail(
        store,
        folder,
        Mail("u1", received=None),
        Mail("t10a", received=at(10)),
        Mail("t5a", received=at(5)),
        Mail("t10b", received=at(10)),
        Mail("u2", received=None),
        Mail("t20", received=at(20)),
        Mail("t5b", received=at(5)),
        Mail("t10c", received=at(10)),
        Mail("t1", received=at(1)),
        Mail("u3", received=None),
        Mail("t20b", received=at(20)),
    )
    store_mail(store, other, Mail("elsewhere", received=at(7)), Mail("x", received=None))
    newest_first = ["t20b", "t20", "t10c", "t10b", "t10a", "t5b", "t5a", "t1", "u3", "u2", "u1"]
    return folder, newest_first


def test_the_timeline_reads_newest_first_or_oldest_first_with_undated_mail_oldest(
    store: SqlSyncStore, reader: MailboxReadStore
) -> None:
    folder, expected = _timeline(store)
    selection = _in(folder)
    assert _subjects(reader.summaries(selection, newest_first=True, after=None, limit=50)) == (
        expected
    )
    assert (
        _subjects(reader.summaries(selection, newest_first=False, after=None, limit=50))
        == (expected[::-1])
    )
    assert (
        _subjects(reader.summaries(selection, newest_first=True, after=None, limit=3))
        == (expected[:3])
    )
    assert reader.summaries(selection, newest_first=True, after=None, limit=0) == []


@pytest.mark.parametrize("size", [1, 2, 3, 4, 11])
@pytest.mark.parametrize("newest_first", [True, False], ids=["newest", "oldest"])
def test_paging_walks_every_row_exactly_once_across_ties_and_undated_rows(
    store: SqlSyncStore, reader: MailboxReadStore, size: int, newest_first: bool
) -> None:
    folder, expected = _timeline(store)
    walked = _walk(reader, _in(folder), newest_first=newest_first, size=size)
    assert walked == (expected if newest_first else expected[::-1])


def test_paging_over_several_folders_merges_their_timelines(
    store: SqlSyncStore, reader: MailboxReadStore
) -> None:
    a = add_folder(store, "A")
    b = add_folder(store, "B")
    store_mail(store, a, Mail("a3", received=at(3)), Mail("a1", received=at(1)))
    store_mail(store, a, Mail("a-undated", received=None), first_uid=10)
    store_mail(store, b, Mail("b2", received=at(2)), Mail("b3", received=at(3)))
    store_mail(store, b, Mail("b-undated", received=None), first_uid=10)
    expected = ["b3", "a3", "b2", "a1", "b-undated", "a-undated"]
    for size in (1, 2, 4):
        assert _walk(reader, _in(a, b), newest_first=True, size=size) == expected
        assert _walk(reader, _in(a, b), newest_first=False, size=size) == expected[::-1]


def test_a_position_given_in_another_zone_means_the_same_instant(
    store: SqlSyncStore, reader: MailboxReadStore
) -> None:
    folder, expected = _timeline(store)
    first = reader.summaries(_in(folder), newest_first=True, after=None, limit=3)
    last = first[-1]
    assert last.received_at is not None
    shifted = last.received_at.astimezone(timezone(timedelta(hours=2)))
    page = reader.summaries(
        _in(folder), newest_first=True, after=TimelinePosition(shifted, last.seq), limit=3
    )
    assert _subjects(page) == expected[3:6]


# -- filters ----------------------------------------------------------------------------


def test_sender_and_recipient_filters_match_the_address_in_its_role_ignoring_case(
    store: SqlSyncStore, reader: MailboxReadStore
) -> None:
    folder = add_folder(store, "INBOX")
    store_mail(
        store,
        folder,
        Mail("from alice", sender="Alice@Example.org", to=("bob@example.net",)),
        Mail("to alice", sender="bob@example.net", to=("ALICE@example.org",)),
        Mail("cc alice", sender="bob@example.net", to=("x@y.z",), cc=("alice@example.ORG",)),
        Mail("unrelated", sender="bob@example.net", to=("x@y.z",)),
    )
    assert _listed(reader, _in(folder, sender_address="alice@example.org")) == ["from alice"]
    assert _listed(reader, _in(folder, recipient_address="alice@example.org")) == [
        "cc alice",
        "to alice",
    ]
    assert _listed(
        reader,
        _in(folder, sender_address="bob@example.net", recipient_address="x@y.z"),
    ) == ["unrelated", "cc alice"]
    assert _listed(reader, _in(folder, sender_address="nobody@example.org")) == []


def test_a_search_filters_by_recipient_too(store: SqlSyncStore, reader: MailboxReadStore) -> None:
    """A word in few of the messages, so that it is ranked (not read off the timeline)."""
    folder = add_folder(store, "INBOX")
    store_mail(
        store,
        folder,
        Mail("to alice", sender="bob@example.net", to=("alice@example.org",), body="heron"),
        Mail("to carol", sender="bob@example.net", to=("carol@example.org",), body="heron"),
        *(Mail(f"other {n}", to=("alice@example.org",), body="egret") for n in range(4)),
    )
    selection = _in(folder, recipient_address="ALICE@example.org")
    assert _found(reader, selection, "heron") == ["to alice"]


def test_an_address_named_in_thousands_of_messages_still_filters_by_role(
    store: SqlSyncStore, reader: MailboxReadStore
) -> None:
    folder = add_folder(store, "INBOX")
    me = "me@example.net"
    mails = [
        Mail(f"m{i}", received=at(i), sender=me, to=("other@x.y",))
        if i % 4 == 0
        else Mail(f"m{i}", received=at(i), to=(me,))
        for i in range(2700)
    ]
    store_mail(store, folder, *mails)

    def first(**filters: str) -> list[str | None]:
        rows = reader.summaries(_in(folder, **filters), newest_first=True, after=None, limit=4)
        return _subjects(rows)

    assert first(recipient_address=me) == ["m2699", "m2698", "m2697", "m2695"]
    assert first(sender_address=me) == ["m2696", "m2692", "m2688", "m2684"]
    assert first(recipient_address="other@x.y") == ["m2696", "m2692", "m2688", "m2684"]


@pytest.mark.parametrize(
    ("fragment", "expected"),
    [
        ("0%", ["100% done"]),
        ("%", ["100% done"]),
        ("_", ["file_name here"]),
        ("e_n", ["file_name here"]),
        ("\\", ["back\\slash"]),
        ("DONE", ["100% done"]),
        ("ÜNÏ", ["Ünïcode Straße"]),
        ("straße", ["Ünïcode Straße"]),
        ("'", ["it's"]),
        ("nothing like it", []),
    ],
)
def test_the_subject_fragment_is_literal_text_matched_ignoring_case(
    store: SqlSyncStore, reader: MailboxReadStore, fragment: str, expected: list[str]
) -> None:
    folder = add_folder(store, "INBOX")
    store_mail(
        store,
        folder,
        Mail("100% done", received=at(1)),
        Mail("100 percent", received=at(2)),
        Mail("file_name here", received=at(3)),
        Mail("filename", received=at(4)),
        Mail("Ünïcode Straße", received=at(5)),
        Mail("back\\slash", received=at(6)),
        Mail("it's", received=at(7)),
        Mail(None, received=at(8)),
    )
    assert _listed(reader, _in(folder, subject_fragment=fragment)) == expected


def test_received_bounds_include_the_start_and_exclude_the_end(
    store: SqlSyncStore, reader: MailboxReadStore
) -> None:
    folder = add_folder(store, "INBOX")
    store_mail(
        store,
        folder,
        *(Mail(f"t{m}", received=at(m)) for m in (1, 2, 3, 4)),
        Mail("undated", received=None),
    )
    assert _listed(reader, _in(folder, received_on_or_after=at(2), received_before=at(4))) == [
        "t3",
        "t2",
    ]
    assert _listed(reader, _in(folder, received_before=at(2))) == ["t1"]
    east = timezone(timedelta(hours=5))
    assert _listed(reader, _in(folder, received_on_or_after=at(4).astimezone(east))) == ["t4"]


def test_seen_flagged_and_attachment_filters(store: SqlSyncStore, reader: MailboxReadStore) -> None:
    folder = add_folder(store, "INBOX")
    store_mail(
        store,
        folder,
        Mail("plain", received=at(1)),
        Mail("seen", received=at(2), flags=RemoteFlags(seen=True)),
        Mail("flagged", received=at(3), flags=RemoteFlags(flagged=True), parts=(ATTACHMENT,)),
        Mail("inline only", received=at(4), parts=(INLINE,)),
        Mail("not held", received=at(5), state=ContentState.AWAITING_HEADROOM),
    )
    assert _listed(reader, _in(folder, seen=True)) == ["seen"]
    assert _listed(reader, _in(folder, seen=False)) == [
        "not held",
        "inline only",
        "flagged",
        "plain",
    ]
    assert _listed(reader, _in(folder, flagged=True)) == ["flagged"]
    assert _listed(reader, _in(folder, flagged=False, seen=False)) == [
        "not held",
        "inline only",
        "plain",
    ]
    assert _listed(reader, _in(folder, has_attachments=True)) == ["flagged"]
    # Content not stored has no attachment count: it is neither with nor without.
    assert _listed(reader, _in(folder, has_attachments=False)) == [
        "inline only",
        "seen",
        "plain",
    ]


def test_the_keyword_filter_ignores_case(store: SqlSyncStore, reader: MailboxReadStore) -> None:
    folder = add_folder(store, "INBOX")
    store_mail(
        store,
        folder,
        Mail("written upper", received=at(1), flags=RemoteFlags(keywords=frozenset({"Urgent"}))),
        Mail("from the server", received=at(2), flags=RemoteFlags.from_names(["$URGENT"])),
        Mail("none", received=at(3)),
        Mail("changed later", received=at(4)),
    )
    store.apply_flag_changes(
        folder.folder_id,
        VALIDITY,
        [FlagChange(4, RemoteFlags(keywords=frozenset({"URGENT", "$urgent"})), 9)],
        NOW,
    )
    assert _listed(reader, _in(folder, keyword="urgent")) == ["changed later", "written upper"]
    assert _listed(reader, _in(folder, keyword="$urgent")) == [
        "changed later",
        "from the server",
    ]
    assert _listed(reader, _in(folder, keyword="urg")) == []


def test_filters_combine_and_never_reach_outside_the_folders(
    store: SqlSyncStore, reader: MailboxReadStore
) -> None:
    inbox = add_folder(store, "INBOX")
    other = add_folder(store, "Other")
    hidden = add_folder(store, "Hidden", visible=False)
    for folder in (inbox, other, hidden):
        store_mail(
            store,
            folder,
            Mail(f"{folder.remote_name} report", sender="a@x.y", received=at(1)),
            Mail(
                f"{folder.remote_name} report read",
                sender="a@x.y",
                received=at(2),
                flags=RemoteFlags(seen=True),
            ),
            Mail(f"{folder.remote_name} memo", sender="a@x.y", received=at(3)),
        )
    assert _listed(
        reader, _in(inbox, hidden, sender_address="a@x.y", subject_fragment="REPORT", seen=False)
    ) == ["INBOX report"]
    assert _listed(reader, _in(hidden)) == []
    assert _listed(reader, _in(inbox, other, subject_fragment="memo")) == [
        "Other memo",
        "INBOX memo",
    ]


# -- search -----------------------------------------------------------------------------


def _search_box(store: SqlSyncStore) -> FolderRecord:
    folder = add_folder(store, "INBOX")
    store_mail(
        store,
        folder,
        Mail("alpha beta", received=at(1)),
        Mail("alpha gamma", received=at(2)),
        Mail("alpha or gamma", received=at(3)),
        Mail("notes", received=at(4), body="we were near the alphabet soup"),
        Mail("physics", received=at(5), body="the subject gamma ray"),
    )
    return folder


def test_search_needs_every_word(store: SqlSyncStore, reader: MailboxReadStore) -> None:
    folder = _search_box(store)
    assert set(_found(reader, _in(folder), "alpha")) == {
        "alpha beta",
        "alpha gamma",
        "alpha or gamma",
    }
    assert _found(reader, _in(folder), "gamma", "beta") == []
    assert _found(reader, _in(folder), "ALPHA", "Beta") == ["alpha beta"]


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (("alpha", "OR", "gamma"), ["alpha or gamma"]),
        (("alpha", "AND", "gamma"), []),
        (("alpha", "NOT", "gamma"), []),
        (("alpha", "-beta"), ["alpha beta"]),
        (("alpha", "!beta"), ["alpha beta"]),
        (("NEAR(",), ["notes"]),
        (("NEAR(alpha", "gamma)"), []),
        (("alpha*",), ["alpha beta", "alpha gamma", "alpha or gamma"]),
        (("alpha|gamma",), ["alpha gamma"]),
        (("alpha&beta",), ["alpha beta"]),
        (("subject:gamma",), ["physics"]),
        (('"alpha', 'beta"'), ["alpha beta"]),
        (
            ("alpha", '"', "*", "-", ":", "(", "<->"),
            ["alpha beta", "alpha gamma", "alpha or gamma"],
        ),
        (('"', "*", ")"), []),
        (("{subject}:", "gamma"), ["physics"]),
        (("^alpha", "beta'"), ["alpha beta"]),
    ],
)
def test_query_syntax_in_words_is_taken_as_plain_text(
    store: SqlSyncStore, reader: MailboxReadStore, words: tuple[str, ...], expected: list[str]
) -> None:
    folder = _search_box(store)
    assert sorted(_found(reader, _in(folder), *words)) == expected


def test_search_ranks_subject_over_participants_over_body_then_newest(
    store: SqlSyncStore, reader: MailboxReadStore
) -> None:
    folder = add_folder(store, "INBOX")
    store_mail(
        store,
        folder,
        Mail("in the body", received=at(9), body="zebra crossing ahead"),
        Mail("zebra crossing", received=at(1), body="nothing here"),
        Mail("from a person", received=at(5), sender_name="Zebra Keeper", body="nothing"),
        Mail("twin", received=at(2), body="okapi"),
        Mail("twin", received=at(3), body="okapi"),
        Mail("twin", received=at(3), body="okapi"),
        Mail("twin", received=None, body="okapi"),
    )
    rows = reader.search(_in(folder), ["zebra"], 10)
    assert [r.summary.subject for r in rows] == ["zebra crossing", "from a person", "in the body"]
    assert rows[0].rank > rows[1].rank > rows[2].rank
    assert all(isinstance(r.rank, float) for r in rows)

    twins = reader.search(_in(folder), ["okapi"], 10)
    assert len({t.rank for t in twins}) == 1
    by_seq = sorted(twins, key=lambda t: t.summary.seq)
    assert [t.summary.seq for t in twins] == [
        by_seq[2].summary.seq,
        by_seq[1].summary.seq,
        by_seq[0].summary.seq,
        by_seq[3].summary.seq,
    ]
    assert [t.summary.received_at for t in twins] == [at(3), at(3), at(2), None]
    assert len(reader.search(_in(folder), ["okapi"], 2)) == 2


def test_search_applies_the_selection_and_returns_the_indexed_body(
    store: SqlSyncStore, reader: MailboxReadStore
) -> None:
    inbox = add_folder(store, "INBOX")
    other = add_folder(store, "Other")
    hidden = add_folder(store, "Hidden", visible=False)
    long_body = "walrus " + "x" * (INDEXED_BODY_CHARACTERS + 500)
    store_mail(
        store,
        inbox,
        Mail("walrus seen", received=at(1), body="a walrus", flags=RemoteFlags(seen=True)),
        Mail("walrus unseen", received=at(2), body="another walrus"),
        Mail("walrus long", received=at(3), body=long_body),
        Mail("walrus not held", received=at(4), state=ContentState.AWAITING_HEADROOM),
    )
    store_mail(store, other, Mail("walrus elsewhere", received=at(5)))
    store_mail(store, hidden, Mail("walrus hidden", received=at(6)))

    rows = {r.summary.subject: r for r in reader.search(_in(inbox, hidden), ["walrus"], 10)}
    assert set(rows) == {"walrus seen", "walrus unseen", "walrus long", "walrus not held"}
    assert rows["walrus seen"].body == "a walrus"
    assert rows["walrus not held"].body == ""
    assert rows["walrus long"].body == long_body[:INDEXED_BODY_CHARACTERS]
    assert rows["walrus seen"].summary.folder_alias == "INBOX"
    assert _found(reader, _in(inbox, seen=False, subject_fragment="UNSEEN"), "walrus") == [
        "walrus unseen"
    ]
    assert _found(reader, _in(hidden), "walrus") == []
    assert reader.search(_in(inbox), [], 10) == []


def test_search_is_exact_beyond_the_first_window_of_best_scores(
    store: SqlSyncStore, reader: MailboxReadStore
) -> None:
    """Hundreds of equally scored matches, most of them outside the selection: the results
    are still the newest matches in scope, whatever part of them the index ranks first."""
    inbox = add_folder(store, "INBOX")
    other = add_folder(store, "Other")
    # Enough mail without the word that it is no common word (see the weightless test).
    filler = add_folder(store, "Filler")
    store_mail(store, filler, *(Mail(f"filler {i}", body="nothing") for i in range(1000)))
    # The best-scored matches (the word in the subject) all lie in the other folder.
    store_mail(
        store,
        other,
        *(Mail(f"heron {i}", received=at(10_000 + i), body="heron") for i in range(260)),
    )
    twins = [
        Mail("twin", received=at(i), body="heron", flags=RemoteFlags(seen=i % 97 != 5))
        for i in range(700)
    ]
    store_mail(store, inbox, *twins, first_uid=1)
    rows = reader.search(_in(inbox), ["heron"], 20)
    assert [r.summary.received_at for r in rows] == [at(i) for i in range(699, 679, -1)]
    assert len({r.rank for r in rows}) == 1
    unseen = reader.search(_in(inbox, seen=False), ["heron"], 20)
    assert [r.summary.received_at for r in unseen] == [
        at(i) for i in (684, 587, 490, 393, 296, 199, 102, 5)
    ]
    subjects = [r.summary.subject for r in reader.search(_in(inbox, other), ["heron"], 50)]
    assert subjects == [f"heron {i}" for i in range(259, 209, -1)]


def test_a_query_of_words_most_mail_carries_ranks_every_match_equally_newest_first(
    store: SqlSyncStore, reader: MailboxReadStore
) -> None:
    """A word in at least half of the indexed mail carries no weight; when every word of the
    query is such a word, relevance has nothing to go by and the newest matches come first."""
    inbox = add_folder(store, "INBOX")
    store_mail(
        store,
        inbox,
        Mail("common in the subject", received=at(1), body="common common common"),
        Mail("plain", received=at(5), body="a common word and a rare one: lynx"),
        Mail("plain", received=at(3), body="common again"),
        Mail("none", received=at(9), body="nothing"),
        Mail("lynx", received=at(2), body="nothing common here"),
        Mail("unknown time", received=None, body="common"),
        Mail("none", received=at(7), body="nothing"),
    )
    rows = reader.search(_in(inbox), ["COMMON"], 10)
    assert [r.summary.received_at for r in rows] == [at(5), at(3), at(2), at(1), None]
    assert {r.rank for r in rows} == {0.0}
    assert [r.summary.received_at for r in reader.search(_in(inbox), ["common"], 2)] == [
        at(5),
        at(3),
    ]
    # A rare word beside it: ranked by the index as usual.
    ranked = reader.search(_in(inbox), ["common", "lynx"], 10)
    assert sorted(r.summary.subject or "" for r in ranked) == ["lynx", "plain"]
    assert len({r.rank for r in ranked}) == 2
    # "nothing" is in 3 of 7: under half, so it is ranked.
    assert {r.rank for r in reader.search(_in(inbox), ["nothing"], 10)} != {0.0}
    # Once the mailbox grows past it, the same reader ranks "common" again.
    store_mail(store, inbox, *(Mail("more", body="other") for _ in range(4)), first_uid=100)
    assert {r.rank for r in reader.search(_in(inbox), ["common"], 10)} != {0.0}


def test_the_sender_filter_survives_the_migration_that_keeps_it_on_the_message(
    engine: sa.Engine, store: SqlSyncStore, reader: MailboxReadStore
) -> None:
    from mailfathom.adapters.sql import migrate

    folder = add_folder(store, "INBOX")
    store_mail(
        store,
        folder,
        Mail("first", received=at(1), sender="Grace@Example.NET"),
        Mail("second", received=at(2), sender="other@example.net", cc=("grace@example.net",)),
    )
    migrate.downgrade(engine, "0002_read_indexes")
    migrate.upgrade(engine)
    assert _listed(reader, _in(folder, sender_address="grace@example.net")) == ["first"]
    assert _listed(reader, _in(folder, recipient_address="grace@example.net")) == ["second"]


def test_one_snapshot_reads_folders_once_and_answers_every_method(
    store: SqlSyncStore, reader: MailboxReadStore
) -> None:
    folder = add_folder(store, "INBOX")
    hidden = add_folder(store, "Hidden", visible=False)
    store_mail(store, folder, Mail("kept", received=at(1), body="ibis"))
    store_mail(store, hidden, Mail("withheld", received=at(2), body="ibis"), first_uid=50)
    with reader.snapshot() as view:
        (listed,) = view.summaries(_in(folder, hidden), newest_first=True, after=None, limit=10)
        # Written after the snapshot began: a snapshot sees the store as it was.
        store_mail(store, folder, Mail("later", received=at(3), body="ibis"), first_uid=90)
        assert [r.summary.subject for r in view.search(_in(folder), ["ibis"], 10)] == ["kept"]
        assert [f.alias for f in view.readable_folders(["acct"])] == ["INBOX"]
        assert set(view.emails([listed.stored_email_id], [hidden.folder_id])) == set()
        assert listed.thread_id is not None
        conversations = view.threads([listed.thread_id], [folder.folder_id, hidden.folder_id])
        assert [m.stored_email_id for m in conversations[listed.thread_id]] == [
            listed.stored_email_id
        ]
    assert len(reader.search(_in(folder), ["ibis"], 10)) == 2


# -- content reads ----------------------------------------------------------------------


def test_emails_returns_the_named_messages_in_scope_with_their_content(
    store: SqlSyncStore, reader: MailboxReadStore
) -> None:
    inbox = add_folder(store, "INBOX", alias="Inbox")
    other = add_folder(store, "Other")
    hidden = add_folder(store, "Hidden")
    store_mail(
        store,
        inbox,
        Mail(
            "full",
            sender="a@x.y",
            to=("b@x.y", "c@x.y"),
            cc=("d@x.y",),
            body="plain words",
            html="<p>plain words</p>",
            parts=(ATTACHMENT, INLINE),
            message_id="full@x",
            references=("root@x", "parent@x"),
        ),
        Mail("not held", state=ContentState.EXCEEDED_SIZE_LIMIT),
    )
    store_mail(store, other, Mail("other"))
    store_mail(store, hidden, Mail("hidden"))
    ids = {
        r.subject: r.stored_email_id
        for f in (inbox, other, hidden)
        for r in reader.summaries(_in(f), newest_first=True, after=None, limit=10)
    }
    add_folder(store, "Hidden", visible=False)

    found = reader.emails(
        [ids["full"], ids["not held"], ids["other"], ids["hidden"], uuid.uuid4()],
        [inbox.folder_id, hidden.folder_id],
    )
    assert set(found) == {ids["full"], ids["not held"]}
    full = found[ids["full"]]
    assert full.summary.subject == "full"
    assert full.summary.folder_alias == "Inbox"
    assert full.participants == (
        ParticipantRow("from", "a@x.y", "Sender Name"),
        ParticipantRow("to", "b@x.y", None),
        ParticipantRow("to", "c@x.y", None),
        ParticipantRow("cc", "d@x.y", None),
    )
    assert full.in_reply_to == ("parent@x",)
    assert full.references == ("root@x", "parent@x")
    assert (full.plain_text, full.html) == ("plain words", "<p>plain words</p>")
    assert full.parts == (
        PartRow("attachment", "report.pdf", False, "application/pdf", 1234, "2"),
        PartRow("inline", "logo.png", True, "image/png", 99, "3"),
    )
    assert full.content_key is not None
    held_back = found[ids["not held"]]
    assert (held_back.plain_text, held_back.html, held_back.parts) == (None, None, ())
    assert held_back.content_key is None
    assert held_back.summary.content_state is ContentState.EXCEEDED_SIZE_LIMIT
    assert held_back.summary.attachment_count is None
    assert reader.emails([], [inbox.folder_id]) == {}


# -- conversations ----------------------------------------------------------------------


def test_a_thread_lists_its_visible_members_in_conversation_order(
    store: SqlSyncStore, reader: MailboxReadStore
) -> None:
    inbox = add_folder(store, "INBOX")
    sent = add_folder(store, "Sent")
    hidden = add_folder(store, "Hidden", visible=False)
    store_mail(
        store,
        inbox,
        Mail(
            "Re: Re: plan",
            message_id="c@x",
            references=("a@x", "b@x"),
            sent=at(20),
            sender="carol@x.y",
        ),
        Mail("plan", message_id="a@x", sent=at(0), sender="alice@x.y"),
        Mail("unrelated", message_id="u@x"),
    )
    store_mail(
        store,
        sent,
        Mail("Re: plan", message_id="b@x", references=("a@x",), sent=at(10), sender="me@x.y"),
    )
    store_mail(
        store, hidden, Mail("Re: plan (hidden)", message_id="h@x", references=("a@x",), sent=at(15))
    )
    rows = {
        r.subject: r
        for f in (inbox, sent)
        for r in reader.summaries(_in(f), newest_first=True, after=None, limit=10)
    }
    thread_id = rows["plan"].thread_id
    assert thread_id is not None
    assert rows["Re: plan"].thread_id == rows["Re: Re: plan"].thread_id == thread_id

    both = reader.thread(thread_id, [inbox.folder_id, sent.folder_id, hidden.folder_id])
    assert [(m.subject, m.sender_address, m.sent_at) for m in both] == [
        ("plan", "alice@x.y", at(0)),
        ("Re: plan", "me@x.y", at(10)),
        ("Re: Re: plan", "carol@x.y", at(20)),
    ]
    assert [m.parent_seq for m in both] == [None, rows["plan"].seq, rows["Re: plan"].seq]
    assert [m.seq for m in both] == [rows[s].seq for s in ("plan", "Re: plan", "Re: Re: plan")]
    assert [m.stored_email_id for m in both] == [
        rows[s].stored_email_id for s in ("plan", "Re: plan", "Re: Re: plan")
    ]
    assert [m.position for m in both] == [0, 1, 2]

    inbox_only = reader.thread(thread_id, [inbox.folder_id])
    assert [m.subject for m in inbox_only] == ["plan", "Re: Re: plan"]
    # The parent outside the scope is named as it is; the use case decides what to show.
    assert inbox_only[1].parent_seq == rows["Re: plan"].seq
    assert reader.thread(thread_id, [hidden.folder_id]) == []
    assert reader.thread(uuid.uuid4(), [inbox.folder_id]) == []


def test_timestamps_come_back_in_utc_whatever_zone_they_were_written_in(
    store: SqlSyncStore, reader: MailboxReadStore
) -> None:
    folder = add_folder(store, "INBOX")
    tokyo = timezone(timedelta(hours=9))
    store_mail(
        store,
        folder,
        Mail(
            "zoned",
            received=at(0).astimezone(tokyo),
            sent=datetime(2026, 3, 1, 18, 0, tzinfo=tokyo),
        ),
    )
    (row,) = reader.summaries(_in(folder), newest_first=True, after=None, limit=1)
    for value in (row.received_at, row.sent_at, row.flags.observed_at):
        assert value is not None
        assert value.utcoffset() == timedelta(0)
    assert row.sent_at == datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
    assert row.received_at == at(0)
