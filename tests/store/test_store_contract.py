"""What synchronization may rely on from the store, proven on SQLite and PostgreSQL alike."""

from __future__ import annotations

import dataclasses
import re
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from mailfathom.adapters.sql import migrate, partitioning
from mailfathom.adapters.sql.conversation_store import SqlConversationStore
from mailfathom.adapters.sql.schema import (
    keywords,
    message_bodies,
    messages,
    metadata,
    participants,
    parts,
)
from mailfathom.adapters.sql.sync_store import SqlSyncStore
from mailfathom.app.sync.types import FlagChange, FolderRecord, NewMessage
from mailfathom.domain.config import AccountConfig, AccountKind, FolderMapping
from mailfathom.domain.content_state import ContentState, RemoteFlags
from mailfathom.domain.folders import FolderRole

from .builders import ATTACHMENT, new_message, normalized
from .searching import matching_seqs

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
VALIDITY = 1000


def _folder(store: SqlSyncStore, account_id: str = "acct", remote: str = "INBOX") -> FolderRecord:
    store.ensure_account(
        AccountConfig(
            account_id=account_id, display_name=account_id, kind=AccountKind.LOCAL, folders=()
        )
    )
    return store.ensure_folder(account_id, FolderMapping(remote, remote, FolderRole.INBOX))


def _awaiting_headroom(uid: int) -> NewMessage:
    """A message stored by its header alone, its content waiting for storage room."""
    return new_message(
        uid,
        normalized("big", message_id="b@x", headers_only=True),
        state=ContentState.AWAITING_HEADROOM,
    )


def _rows(store: SqlSyncStore) -> list[sa.Row]:  # type: ignore[type-arg]
    with store.engine.connect() as c:
        return list(c.execute(sa.select(messages).order_by(messages.c.uid)))


def _count(store: SqlSyncStore, table: sa.Table) -> int:
    with store.engine.connect() as c:
        return int(c.execute(sa.select(sa.func.count()).select_from(table)).scalar_one())


_PARTITION = re.compile(r"^\w+_p\d+$")


def _one_partition(difference: Any) -> bool:
    """A partition of a partitioned table (`messages_p0`), or the key PostgreSQL derives
    for one: the partitioned parent is what is compared."""
    found = (difference[0] if isinstance(difference, list) else difference)[1]
    if isinstance(found, sa.ForeignKeyConstraint) and _PARTITION.match(found.referred_table.name):
        return True
    table = found if isinstance(found, sa.Table) else getattr(found, "table", None)
    return table is not None and bool(_PARTITION.match(table.name))


def _named(difference: Any) -> tuple[str, str | None, tuple[str, ...]]:
    found = difference[1]
    return (difference[0], found.name, tuple(c.name for c in found.columns))


def _partitioned_keys() -> set[tuple[str, str | None, tuple[str, ...]]]:
    """How a partitioned layout's keys differ, by design (`partitioning.WIDENED_KEYS`): each
    unique key of `messages` holds `account_id` too, and (account_id, seq) is its primary key
    instead of an index of its own."""
    found: set[tuple[str, str | None, tuple[str, ...]]] = {
        ("add_index", "uq_messages_account_seq", ("account_id", "seq"))
    }
    plain = {"uq_messages_folder_uid": ("folder_id", "uidvalidity", "uid")}
    for table, name, columns in partitioning.WIDENED_KEYS:
        if table == "messages" and name is not None:
            found.add(("remove_constraint", name, columns))
            # The plain layout's key on stored_email_id alone is the column's, unnamed.
            kept = name if name in plain else None
            found.add(("add_constraint", kept, plain.get(name, ("stored_email_id",))))
    return found


def test_the_schema_the_queries_use_is_the_one_the_migrations_create(
    engine: sa.Engine,
) -> None:
    with engine.connect() as connection:
        context = MigrationContext.configure(connection)
        differences = [
            d
            for d in compare_metadata(context, metadata)
            # FTS5's shadow tables are SQLite's own, and the PostgreSQL index table does not
            # exist on SQLite by design.
            if not (d[0] == "remove_table" and d[1].name.startswith("message_fts"))
            and not (d[0] == "add_table" and d[1].name == "message_search")
            and not (
                d[0] == "add_index"
                and d[1].table.name == "message_search"
                and engine.dialect.name == "sqlite"
            )
            and not _one_partition(d)
        ]
    with engine.connect() as connection:
        partitioned = partitioning.partition_count(connection) is not None
    if partitioned:
        assert {_named(d) for d in differences} == _partitioned_keys()
    else:
        assert differences == []


def test_migrations_go_down_to_nothing_and_back_up(engine: sa.Engine) -> None:
    migrate.downgrade(engine, "base")
    assert migrate.current_revision(engine) is None
    assert sa.inspect(engine).get_table_names() in ([], ["alembic_version"])
    migrate.upgrade(engine)
    assert migrate.current_revision(engine) == migrate.head_revision()
    assert migrate.stored_revision(engine) == migrate.NEWEST_REVISION


def test_the_newest_revision_known_without_alembic_is_alembics_head(engine: sa.Engine) -> None:
    # The fast path of `upgrade` skips Alembic when the database records this revision: a
    # migration added without moving the constant would otherwise never run.
    assert migrate.head_revision() == migrate.NEWEST_REVISION
    assert migrate.stored_revision(engine) == migrate.NEWEST_REVISION
    migrate.downgrade(engine, "0003_filtered_timelines")
    assert migrate.stored_revision(engine) == "0003_filtered_timelines"
    migrate.upgrade(engine)
    assert migrate.current_revision(engine) == migrate.NEWEST_REVISION


def test_folders_are_created_once_and_follow_their_mapping(store: SqlSyncStore) -> None:
    first = _folder(store)
    again = store.ensure_folder(
        "acct", FolderMapping("INBOX", "Main", FolderRole.INBOX, visible_to_tools=False)
    )
    assert again.folder_id == first.folder_id
    assert again.alias == "Main"
    assert again.visible_to_tools is False
    assert first.last_committed_at is None
    assert first.uidvalidity is None


def test_folders_of_a_pass_are_read_together_and_follow_their_mappings(
    store: SqlSyncStore,
) -> None:
    inbox = _folder(store)
    records = store.ensure_folders(
        "acct",
        [
            FolderMapping("Sent", "Sent", FolderRole.SENT),
            FolderMapping("INBOX", "Inbox", FolderRole.INBOX),
            FolderMapping("Archive", "Archive", FolderRole.ARCHIVE, visible_to_tools=False),
        ],
    )
    assert [r.remote_name for r in records] == ["Sent", "INBOX", "Archive"]
    assert records[1].folder_id == inbox.folder_id
    assert records[1].alias == "Inbox"
    assert records[2].visible_to_tools is False
    assert len({r.folder_id for r in records}) == 3
    again = store.ensure_folders("acct", [FolderMapping("Archive", "Archive", FolderRole.ARCHIVE)])
    assert again[0].folder_id == records[2].folder_id
    assert again[0].visible_to_tools is True
    assert store.ensure_folders("acct", []) == []


def test_held_back_work_is_seen_in_one_question(store: SqlSyncStore) -> None:
    folder = _folder(store)
    other = _folder(store, remote="Archive")
    store.add_messages(folder, VALIDITY, [new_message(1, normalized("S1", message_id="m1@x"))], NOW)
    assert store.holds_back(folder.folder_id, VALIDITY) is False
    store.add_messages(folder, VALIDITY, [_awaiting_headroom(2)], NOW)
    assert store.holds_back(folder.folder_id, VALIDITY) is True
    assert store.holds_back(folder.folder_id, VALIDITY + 1) is False
    assert store.holds_back(other.folder_id, VALIDITY) is False
    store.add_messages(other, VALIDITY, [new_message(7, normalized("S7", message_id="m7@x"))], NOW)
    (seq,) = [r.seq for r in _rows(store) if r.folder_id == other.folder_id]
    store.request_repair("acct", seq, "damaged")
    assert store.holds_back(other.folder_id, VALIDITY) is True
    store.fill_content(other.folder_id, VALIDITY, 7, normalized("S7", message_id="m7@x"), "ab" * 32)
    assert store.holds_back(other.folder_id, VALIDITY) is False


def test_a_repeated_batch_stores_each_message_once(store: SqlSyncStore) -> None:
    folder = _folder(store)
    batch = [new_message(uid, normalized(f"S{uid}", message_id=f"m{uid}@x")) for uid in (1, 2, 3)]
    assert store.add_messages(folder, VALIDITY, batch, NOW) == 3
    assert store.add_messages(folder, VALIDITY, batch, NOW) == 0
    assert (
        store.add_messages(
            folder, VALIDITY, [*batch, new_message(4, normalized("S4", message_id="m4@x"))], NOW
        )
        == 1
    )
    rows = _rows(store)
    assert [r.uid for r in rows] == [1, 2, 3, 4]
    assert len({r.stored_email_id for r in rows}) == 4
    assert store.folder(folder.folder_id).last_committed_at == NOW


def test_what_normalization_derived_is_stored_with_the_message(store: SqlSyncStore) -> None:
    folder = _folder(store)
    message = normalized(
        "Quarterly report",
        message_id="q@x",
        body="Numbers attached.\x00 End",
        parts=(ATTACHMENT,),
    )
    store.add_messages(
        folder,
        VALIDITY,
        [new_message(7, message, flags=RemoteFlags(seen=True, keywords=frozenset({"$label1"})))],
        NOW,
    )
    (row,) = _rows(store)
    assert row.subject == "Quarterly report"
    assert row.seen is True
    assert row.attachment_count == 1
    assert row.inline_count == 0
    assert row.sent_at is not None
    with store.engine.connect() as c:
        people = c.execute(
            sa.select(participants.c.role, participants.c.address_key).order_by(
                participants.c.position
            )
        ).all()
        body = c.execute(sa.select(message_bodies.c.plain_text)).scalar_one()
        files = c.execute(sa.select(parts.c.file_name, parts.c.size_octets)).all()
        words = c.execute(sa.select(keywords.c.keyword)).scalars().all()
    assert people == [("from", "sender@example.org"), ("to", "owner@example.net")]
    assert body == "Numbers attached. End"
    assert files == [("report.pdf", 1234)]
    assert words == ["$label1"]


def test_flag_changes_replace_flags_and_keywords_of_known_uids_only(store: SqlSyncStore) -> None:
    folder = _folder(store)
    store.add_messages(
        folder,
        VALIDITY,
        [
            new_message(
                1, normalized("a", message_id="a@x"), flags=RemoteFlags(keywords=frozenset({"old"}))
            )
        ],
        NOW,
    )
    changed = store.apply_flag_changes(
        folder.folder_id,
        VALIDITY,
        [
            FlagChange(1, RemoteFlags(flagged=True, keywords=frozenset({"new"})), 9),
            FlagChange(99, RemoteFlags(seen=True), 10),
        ],
        NOW,
    )
    assert changed == 1
    (flags,) = store.stored_flags(folder.folder_id, VALIDITY).values()
    assert flags.flags == RemoteFlags(flagged=True, keywords=frozenset({"new"}))
    assert flags.modseq == 9


def test_removing_uids_drops_rows_and_reports_content_no_row_still_uses(
    store: SqlSyncStore,
) -> None:
    folder = _folder(store)
    shared = "ab" * 32
    store.add_messages(
        folder,
        VALIDITY,
        [
            new_message(1, normalized("one", message_id="1@x", parts=(ATTACHMENT,)), key=shared),
            new_message(2, normalized("two", message_id="2@x"), key=shared),
            new_message(3, normalized("three", message_id="3@x")),
        ],
        NOW,
    )
    assert store.remove_uids(folder.folder_id, VALIDITY, [1]) == []
    assert store.remove_uids(folder.folder_id, VALIDITY, [2, 3, 42]) == sorted(
        [shared, f"{3:064x}"]
    )
    assert _rows(store) == []
    assert _count(store, participants) == 0
    assert _count(store, parts) == 0


def test_rows_survive_a_uidvalidity_change_under_their_identity(store: SqlSyncStore) -> None:
    folder = _folder(store)
    store.add_messages(
        folder,
        VALIDITY,
        [
            new_message(5, normalized("kept", message_id="k@x"), size=100),
            new_message(6, normalized("gone", message_id="g@x"), size=200),
        ],
        NOW,
    )
    identity = {r.subject: r.stored_email_id for r in _rows(store)}
    stale = store.stale_identities(folder.folder_id, 2000)
    assert set(stale) == {("k@x", 100), ("g@x", 200)}
    assert store.rekey(folder.folder_id, 2000, [(stale[("k@x", 100)][0], 1)]) == 1
    assert store.stored_uids(folder.folder_id, 2000) == {1}
    store.drop_stale(folder.folder_id, 2000)
    (row,) = _rows(store)
    assert (row.uid, row.uidvalidity, row.stored_email_id) == (1, 2000, identity["kept"])


def test_held_back_content_is_completed_in_place(store: SqlSyncStore) -> None:
    folder = _folder(store)
    store.add_messages(folder, VALIDITY, [_awaiting_headroom(3)], NOW)
    assert store.awaiting_headroom(folder.folder_id, VALIDITY) == [3]
    (before,) = _rows(store)
    assert before.attachment_count is None
    assert before.content_key is None
    assert matching_seqs(store.engine, [folder.folder_id], "unicorn") == []
    store.fill_content(
        folder.folder_id,
        VALIDITY,
        3,
        normalized("big", message_id="b@x", body="a unicorn appears", parts=(ATTACHMENT,)),
        "cd" * 32,
    )
    (after,) = _rows(store)
    assert after.stored_email_id == before.stored_email_id
    assert after.content_state == ContentState.STORED.value
    assert after.attachment_count == 1
    assert after.content_key == "cd" * 32
    assert store.awaiting_headroom(folder.folder_id, VALIDITY) == []
    assert matching_seqs(store.engine, [folder.folder_id], "unicorn") == [after.seq]


def test_the_lexical_index_follows_subject_participants_and_body(store: SqlSyncStore) -> None:
    folder = _folder(store)
    store.add_messages(
        folder,
        VALIDITY,
        [
            new_message(1, normalized("Budget meeting", message_id="1@x", body="bring slides")),
            new_message(
                2,
                normalized(
                    "Lunch", message_id="2@x", body="pizza on friday", sender="carol@example.org"
                ),
            ),
        ],
        NOW,
    )
    seqs = {r.uid: r.seq for r in _rows(store)}
    other = _folder(store, account_id="other")
    inbox = [folder.folder_id]
    assert matching_seqs(store.engine, inbox, "budget") == [seqs[1]]
    assert matching_seqs(store.engine, inbox, "pizza friday") == [seqs[2]]
    assert matching_seqs(store.engine, inbox, "carol") == [seqs[2]]
    assert matching_seqs(store.engine, [other.folder_id], "pizza") == []
    store.remove_uids(folder.folder_id, VALIDITY, [2])
    assert matching_seqs(store.engine, inbox, "pizza") == []


def test_replies_join_their_conversation_whatever_order_they_arrive_in(
    store: SqlSyncStore,
) -> None:
    folder = _folder(store)
    store.add_messages(
        folder,
        VALIDITY,
        [
            new_message(
                2, normalized("Re: plan", message_id="r@x", references=("p@x",), minutes=5)
            ),
            new_message(3, normalized("unrelated", message_id="u@x")),
        ],
        NOW,
    )
    rows = {r.subject: r for r in _rows(store)}
    assert rows["Re: plan"].thread_id != rows["unrelated"].thread_id
    reply_thread = rows["Re: plan"].thread_id
    store.add_messages(
        folder, VALIDITY, [new_message(1, normalized("plan", message_id="p@x"))], NOW
    )
    rows = {r.subject: r for r in _rows(store)}
    assert rows["plan"].thread_id == rows["Re: plan"].thread_id == reply_thread
    assert rows["Re: plan"].thread_parent_seq == rows["plan"].seq
    assert (rows["plan"].thread_position, rows["Re: plan"].thread_position) == (0, 1)


def test_conversations_are_stable_under_rederivation_and_survive_removals(
    store: SqlSyncStore, conversations: SqlConversationStore
) -> None:
    folder = _folder(store)
    store.add_messages(
        folder,
        VALIDITY,
        [
            new_message(1, normalized("root", message_id="a@x")),
            new_message(2, normalized("child", message_id="b@x", references=("a@x",), minutes=1)),
            new_message(
                3, normalized("grandchild", message_id="c@x", references=("a@x", "b@x"), minutes=2)
            ),
        ],
        NOW,
    )
    before = {
        r.subject: (r.thread_id, r.thread_parent_seq, r.thread_position) for r in _rows(store)
    }
    assert conversations.rederive_conversations("acct") == 3
    assert {
        r.subject: (r.thread_id, r.thread_parent_seq, r.thread_position) for r in _rows(store)
    } == before
    store.remove_uids(folder.folder_id, VALIDITY, [2])
    rows = {r.subject: r for r in _rows(store)}
    assert rows["grandchild"].thread_id == rows["root"].thread_id
    assert rows["grandchild"].thread_parent_seq == rows["root"].seq


def test_timestamps_come_back_in_utc(store: SqlSyncStore) -> None:
    folder = _folder(store)
    store.add_messages(folder, VALIDITY, [new_message(1, normalized("t", message_id="t@x"))], NOW)
    (row,) = _rows(store)
    sent = row.sent_at if row.sent_at.tzinfo else row.sent_at.replace(tzinfo=UTC)
    assert sent == datetime(2026, 2, 1, 8, 0, tzinfo=UTC)
    assert store.folder(folder.folder_id).last_committed_at == NOW


def test_an_identifier_too_long_to_index_still_threads_exactly(store: SqlSyncStore) -> None:
    folder = _folder(store)
    long_id = "".join(chr(0x4E00 + (i * 7919) % 20000) for i in range(950)) + "@example.org"
    store.add_messages(
        folder,
        VALIDITY,
        [
            new_message(1, normalized("root", message_id=long_id)),
            new_message(2, normalized("reply", message_id="r@x", references=(long_id,))),
            new_message(3, normalized("other", message_id="o@x")),
        ],
        NOW,
    )
    rows = {r.subject: r for r in _rows(store)}
    assert rows["reply"].thread_id == rows["root"].thread_id != rows["other"].thread_id
    assert rows["reply"].thread_parent_seq == rows["root"].seq


def test_an_instant_given_in_any_zone_comes_back_as_the_same_instant_in_utc(
    store: SqlSyncStore,
) -> None:
    folder = _folder(store)
    elsewhere = datetime(2026, 5, 1, 14, 0, tzinfo=timezone(timedelta(hours=2)))
    sent = datetime(2026, 2, 1, 3, 0, tzinfo=timezone(timedelta(hours=-5)))
    store.add_messages(
        folder,
        VALIDITY,
        [new_message(1, dataclasses.replace(normalized("z", message_id="z@x"), sent_at=sent))],
        NOW,
    )
    store.record_progress(
        folder.folder_id,
        uidvalidity=VALIDITY,
        highest_modseq=None,
        uid_next=2,
        committed_at=elsewhere,
    )
    committed = store.folder(folder.folder_id).last_committed_at
    assert committed == NOW
    assert committed is not None
    assert committed.utcoffset() == timedelta(0)
    (row,) = _rows(store)
    assert row.sent_at == datetime(2026, 2, 1, 8, 0, tzinfo=UTC)
    assert row.sent_at.utcoffset() == timedelta(0)


def test_a_timestamp_without_a_zone_is_refused(store: SqlSyncStore) -> None:
    folder = _folder(store)
    with pytest.raises(sa.exc.StatementError) as raised:
        store.record_progress(
            folder.folder_id,
            uidvalidity=VALIDITY,
            highest_modseq=None,
            uid_next=2,
            committed_at=datetime(2026, 5, 1, 12, 0),
        )
    assert isinstance(raised.value.orig, ValueError)
    assert store.folder(folder.folder_id).last_committed_at is None
