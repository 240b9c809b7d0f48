"""Under filters, the first copy that passes them stands for a message kept in several folders.

Dovecot, Fastmail and Exchange keep flags and INTERNALDATE per copy, and Gmail's copies
disagree while one folder's synchronization lags another's: one copy may be flagged and
another not. A filter reads each copy, so a copy failing it never hides one that passes: the
message is listed once whenever one of its copies passes, from the first such copy in the
order of the scope (the Inbox-role folder, then the order the folders were first mapped),
naming every other folder of the scope holding it. Pages stay full and cursors exact, and a
search (ranked or over words most mail carries) reads its words on each copy as well.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import pytest

from mailfathom.adapters.sql.sync_store import SqlSyncStore
from mailfathom.app.shared.stored_mail import SummaryRow, TimelinePosition
from mailfathom.app.shared.stored_mail_ports import MailboxReadStore
from mailfathom.app.sync.types import FolderRecord
from mailfathom.domain.content_state import RemoteFlags

from .reading_builders import Mail, at, store_mail
from .test_mailbox_reader_contract import reader as reader
from .test_message_copies_contract import Gmail, _entries, _in, _listed, key

_FLAGGED = RemoteFlags(flagged=True)
_SEEN = RemoteFlags(seen=True)
_LABELLED = RemoteFlags(keywords=frozenset({"$label1"}))


def _copy(**fields: Any) -> Mail:
    base: dict[str, Any] = {"subject": "minutes", "key": key("minutes"), "body": "heron"}
    return Mail(**{**base, **fields})


# A filter, the INBOX copy (failing it) and the copy Work and All Mail hold (passing it).
# The last three differ in what is read from the octets: copies written by parsers of two
# versions of the server.
_ONLY_LATER_COPIES_PASS: dict[str, tuple[dict[str, Any], Mail, Mail]] = {
    "flagged": ({"flagged": True}, _copy(), _copy(flags=_FLAGGED)),
    "not flagged": ({"flagged": False}, _copy(flags=_FLAGGED), _copy()),
    "seen": ({"seen": True}, _copy(), _copy(flags=_SEEN)),
    "unseen": ({"seen": False}, _copy(flags=_SEEN), _copy()),
    "keyword": ({"keyword": "$label1"}, _copy(), _copy(flags=_LABELLED)),
    "received after": (
        {"received_on_or_after": at(5)},
        _copy(received=at(0)),
        _copy(received=at(10)),
    ),
    "received before": (
        {"received_before": at(5)},
        _copy(received=at(10)),
        _copy(received=at(0)),
    ),
    "subject": ({"subject_fragment": "final"}, _copy(), _copy(subject="minutes, final")),
    "sender": (
        {"sender_address": "clerk@example.org"},
        _copy(),
        _copy(sender="clerk@example.org"),
    ),
    "indexed words": ({"indexed_words": ("egret",)}, _copy(), _copy(body="heron egret")),
}


def _filed(store: SqlSyncStore, inbox_copy: Mail, later_copy: Mail) -> Gmail:
    g = Gmail(store)
    store_mail(store, g.inbox, inbox_copy)
    store_mail(store, g.work, later_copy)
    store_mail(store, g.all, later_copy)
    return g


@dataclass(frozen=True)
class Filed:
    """A message in INBOX, Work and All Mail, and filters only its later copies pass."""

    g: Gmail
    filters: dict[str, Any]
    inbox_copy: Mail
    later_copy: Mail


@pytest.fixture(params=list(_ONLY_LATER_COPIES_PASS))
def filed(request: pytest.FixtureRequest, store: SqlSyncStore) -> Filed:
    filters, inbox_copy, later_copy = _ONLY_LATER_COPIES_PASS[request.param]
    return Filed(_filed(store, inbox_copy, later_copy), filters, inbox_copy, later_copy)


def test_a_copy_failing_a_filter_never_hides_one_that_passes(
    reader: MailboxReadStore, filed: Filed
) -> None:
    g, filters, later = filed.g, filed.filters, filed.later_copy.subject
    assert _entries(_listed(reader, _in(g.inbox, g.work, g.all, **filters))) == [
        (later, "Work", ("INBOX", "All Mail"))
    ]
    assert _entries(_listed(reader, _in(g.inbox, g.all, **filters))) == [
        (later, "All Mail", ("INBOX",))
    ]
    assert _entries(_listed(reader, _in(g.inbox, **filters))) == []
    # Unfiltered, the INBOX copy stands for the message as before.
    assert _entries(_listed(reader, _in(g.inbox, g.work, g.all))) == [
        (filed.inbox_copy.subject, "INBOX", ("Work", "All Mail"))
    ]


@pytest.mark.parametrize("common", [False, True], ids=["ranked", "common word"])
def test_a_search_reads_its_filters_on_each_copy(
    store: SqlSyncStore, reader: MailboxReadStore, filed: Filed, common: bool
) -> None:
    g = filed.g
    if not common:
        # Enough mail without the word that it is ranked by the index.
        store_mail(store, g.sent, *(Mail(f"filler {i}", body="nothing") for i in range(12)))
    found = reader.search(_in(g.inbox, g.work, g.all, **filed.filters), ["heron"], 50)
    assert [(r.summary.folder_alias, r.summary.other_folder_aliases) for r in found] == [
        ("Work", ("INBOX", "All Mail"))
    ]
    assert {r.rank == 0.0 for r in found} == {common}


@pytest.mark.parametrize("common", [False, True], ids=["ranked", "common word"])
def test_a_search_reads_its_words_on_each_copy(
    store: SqlSyncStore, reader: MailboxReadStore, common: bool
) -> None:
    """The INBOX copy was indexed without the word (a parser of another version read it)."""
    g = _filed(store, _copy(body="nothing"), _copy(body="heron"))
    if not common:
        store_mail(store, g.sent, *(Mail(f"filler {i}", body="nothing") for i in range(12)))
    found = reader.search(_in(g.inbox, g.work, g.all), ["heron"], 50)
    assert [(r.summary.folder_alias, r.summary.other_folder_aliases) for r in found] == [
        ("Work", ("INBOX", "All Mail"))
    ]
    assert {r.rank == 0.0 for r in found} == {common}


def test_a_copy_ranked_outside_the_search_window_still_stands_for_its_message(
    store: SqlSyncStore, reader: MailboxReadStore
) -> None:
    """The INBOX copy, indexed with a long body, ranks below two hundred other matches; the
    Work copy, indexed with a short one, ranks first, and is not listed all the same."""
    g = _filed(store, _copy(body="heron " + "padding " * 400), _copy(body="heron"))
    store_mail(store, g.sent, *(Mail(f"filler {i}", body="nothing") for i in range(300)))
    others = (Mail(f"bird {i}", body="heron " + "words " * (i % 100 + 1)) for i in range(250))
    store_mail(store, g.all, *others, first_uid=1000)
    top = reader.search(_in(g.inbox, g.work, g.all), ["heron"], 50)
    assert "minutes" not in [r.summary.subject for r in top]
    every = reader.search(_in(g.inbox, g.work, g.all), ["heron"], 300)
    assert [(r.summary.folder_alias, r.summary.other_folder_aliases)
            for r in every if r.summary.subject == "minutes"] == [
        ("INBOX", ("Work", "All Mail"))
    ]  # fmt: skip


def _layout(g: Gmail) -> dict[str, list[tuple[FolderRecord, Mail]]]:
    """Fourteen messages, each in All Mail, every second in INBOX, every third in Work; each
    copy with flags and an INTERNALDATE of its own (some unknown)."""
    order = (g.inbox, g.work, g.all)
    layout: dict[str, list[tuple[FolderRecord, Mail]]] = {}
    for n in range(14):
        name = f"m{n:02d}"
        held = [g.inbox] * (n % 2 == 0) + [g.work] * (n % 3 == 0) + [g.all]
        for folder in held:
            place = order.index(folder)
            received = None if (n + place) % 6 == 5 else at((n * 3 + place * 7) % 11)
            flags = RemoteFlags(flagged=(n + place) % 3 == 0)
            layout.setdefault(name, []).append(
                (folder, Mail(name, received=received, key=key(name), flags=flags))
            )
    return layout


def _walk(
    reader: MailboxReadStore, g: Gmail, size: int, newest_first: bool, **filters: Any
) -> list[SummaryRow]:
    selection = _in(g.inbox, g.work, g.all, **filters)
    walked: list[SummaryRow] = []
    after: TimelinePosition | None = None
    while True:
        page = reader.summaries(selection, newest_first=newest_first, after=after, limit=size)
        walked.extend(page)
        if len(page) < size:
            return walked
        after = TimelinePosition(page[-1].received_at, page[-1].seq)


def _timeline_key(row: SummaryRow) -> tuple[bool, datetime, int]:
    return (row.received_at is not None, row.received_at or datetime.min, row.seq)


@pytest.mark.parametrize("size", [1, 2, 3, 5])
@pytest.mark.parametrize("newest_first", [True, False], ids=["newest", "oldest"])
def test_pages_of_copies_passing_a_filter_are_full_and_walk_every_message_once(
    store: SqlSyncStore, reader: MailboxReadStore, size: int, newest_first: bool
) -> None:
    g = Gmail(store)
    layout = _layout(g)
    for uid, copies in enumerate(layout.values(), start=100):
        for folder, mail in copies:
            store_mail(store, folder, mail, first_uid=uid)
    expected = {
        name: next(f.alias for f, m in copies if m.flags.flagged)
        for name, copies in layout.items()
        if any(m.flags.flagged for _, m in copies)
    }
    walked = _walk(reader, g, size, newest_first, flagged=True)
    assert {r.subject: r.folder_alias for r in walked} == expected
    assert len(walked) == len(expected)
    assert all(r.flags.flagged for r in walked)
    assert walked == sorted(walked, key=_timeline_key, reverse=newest_first)
    whole = reader.summaries(
        _in(g.inbox, g.work, g.all, flagged=True), newest_first=newest_first, after=None, limit=100
    )
    assert [r.seq for r in walked] == [r.seq for r in whole]
    # The messages with an unflagged copy, each once, from its first unflagged copy.
    unflagged = _walk(reader, g, size, newest_first, flagged=False)
    assert {r.subject: r.folder_alias for r in unflagged} == {
        name: next(f.alias for f, m in copies if not m.flags.flagged)
        for name, copies in layout.items()
        if not all(m.flags.flagged for _, m in copies)
    }
