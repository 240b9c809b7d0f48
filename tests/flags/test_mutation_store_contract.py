"""What flag changes rely on from the mutation record store, on SQLite and PostgreSQL: one
commit per call, a retry answering the first call's records, a reused identity refused for a
different value, the local copy showing the asked value, and the record lifecycle."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest
import sqlalchemy as sa

from mailfathom.adapters.sql.mutation_admin import SqlMutationRecords
from mailfathom.adapters.sql.mutations import SqlMutationStore
from mailfathom.adapters.sql.schema import keywords, messages
from mailfathom.adapters.sql.sync_store import SqlSyncStore
from mailfathom.app.flags.ports import MutationTarget, RequestIdentityTaken
from mailfathom.app.sync.types import FlagChange
from mailfathom.domain.content_state import RemoteFlags
from mailfathom.domain.mutations import (
    MutationFailure,
    MutationKind,
    MutationState,
    RequestedMutation,
)
from store.reading_builders import VALIDITY, Mail, add_folder, store_mail

T0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
SEEN = RequestedMutation(MutationKind.SET_SEEN, "true")
FLAGGED = RequestedMutation(MutationKind.SET_FLAGGED, "true")


@pytest.fixture
def mutations(engine: sa.Engine) -> SqlMutationStore:
    return SqlMutationStore(engine)


def _email(engine: sa.Engine, uid: int = 1) -> uuid.UUID:
    with engine.connect() as c:
        value: uuid.UUID = c.execute(
            sa.select(messages.c.stored_email_id).where(messages.c.uid == uid)
        ).scalar_one()
    return value


def _held(store: SqlSyncStore, engine: sa.Engine) -> tuple[MutationTarget, int]:
    folder = add_folder(store, "INBOX", alias="Inbox")
    store.record_progress(
        folder.folder_id, uidvalidity=VALIDITY, highest_modseq=9, uid_next=5, committed_at=T0
    )
    store_mail(
        store,
        folder,
        Mail("a", flags=RemoteFlags(keywords=frozenset({"old", "keep"}))),
        Mail("b"),
    )
    return MutationTarget(_email(engine), "acct", folder.folder_id, "Inbox"), folder.folder_id


def test_an_email_in_a_readable_folder_is_a_target_and_one_outside_is_not(
    store: SqlSyncStore, engine: sa.Engine, mutations: SqlMutationStore
) -> None:
    target, folder_id = _held(store, engine)
    assert mutations.target(target.stored_email_id, [folder_id]) == target
    assert mutations.target(target.stored_email_id, []) is None
    assert mutations.target(target.stored_email_id, [folder_id + 1000]) is None
    assert mutations.target(uuid.uuid4(), [folder_id]) is None


def test_a_row_of_an_older_uidvalidity_names_no_remote_message_and_is_no_target(
    store: SqlSyncStore, engine: sa.Engine, mutations: SqlMutationStore
) -> None:
    target, folder_id = _held(store, engine)
    store.record_progress(
        folder_id, uidvalidity=VALIDITY + 1, highest_modseq=1, uid_next=1, committed_at=T0
    )
    assert mutations.target(target.stored_email_id, [folder_id]) is None


def test_one_call_writes_one_pending_record_per_value_and_the_local_copy_shows_them(
    store: SqlSyncStore, engine: sa.Engine, mutations: SqlMutationStore
) -> None:
    target, _ = _held(store, engine)
    added = RequestedMutation(MutationKind.ADD_KEYWORDS, "new")
    records = mutations.record(target, "agent", "r1", [SEEN, FLAGGED, added], T0)
    assert [r.kind for r in records] == [
        MutationKind.SET_SEEN,
        MutationKind.SET_FLAGGED,
        MutationKind.ADD_KEYWORDS,
    ]
    assert {r.state for r in records} == {MutationState.PENDING}
    assert all(r.attempts == 0 and r.last_error_code is None for r in records)
    with engine.connect() as c:
        row = c.execute(
            sa.select(messages.c.seen, messages.c.flagged, messages.c.seq).where(
                messages.c.stored_email_id == target.stored_email_id
            )
        ).one()
        words = set(
            c.execute(sa.select(keywords.c.keyword).where(keywords.c.seq == row.seq)).scalars()
        )
    assert (row.seen, row.flagged) == (True, True)
    assert words == {"old", "keep", "new"}


def test_replace_and_remove_show_on_the_local_copy_ignoring_case(
    store: SqlSyncStore, engine: sa.Engine, mutations: SqlMutationStore
) -> None:
    target, _ = _held(store, engine)
    mutations.record(
        target, "agent", "r1", [RequestedMutation(MutationKind.SET_KEYWORDS, "keep x")], T0
    )
    mutations.record(
        target, "agent", "r2", [RequestedMutation(MutationKind.REMOVE_KEYWORDS, "x")], T0
    )
    with engine.connect() as c:
        words = set(
            c.execute(
                sa.select(keywords.c.keyword)
                .join(messages, messages.c.seq == keywords.c.seq)
                .where(messages.c.stored_email_id == target.stored_email_id)
            ).scalars()
        )
    assert words == {"keep"}


def test_a_retry_answers_the_first_records_as_they_stand(
    store: SqlSyncStore, engine: sa.Engine, mutations: SqlMutationStore
) -> None:
    target, _ = _held(store, engine)
    first = mutations.record(target, "agent", "r1", [SEEN, FLAGGED], T0)
    mutations.begin([first[0].record_id], T0)
    again = mutations.record(target, "agent", "r1", [SEEN, FLAGGED], T0)
    assert [r.record_id for r in again] == [r.record_id for r in first]
    assert [r.state for r in again] == [MutationState.CONVERGING, MutationState.PENDING]
    other = mutations.record(target, "someone-else", "r1", [SEEN], T0)
    assert other[0].record_id != first[0].record_id


def test_a_reused_identity_for_another_value_writes_nothing_of_the_call(
    store: SqlSyncStore, engine: sa.Engine, mutations: SqlMutationStore
) -> None:
    target, _ = _held(store, engine)
    mutations.record(target, "agent", "r1", [SEEN], T0)
    unseen = RequestedMutation(MutationKind.SET_SEEN, "false")
    with pytest.raises(RequestIdentityTaken):
        mutations.record(target, "agent", "r1", [FLAGGED, unseen], T0)
    assert [r.kind for r in mutations.open_mutations("acct")] == [MutationKind.SET_SEEN]
    with engine.connect() as c:
        flagged = c.execute(
            sa.select(messages.c.flagged).where(
                messages.c.stored_email_id == target.stored_email_id
            )
        ).scalar_one()
    assert flagged is False


def test_open_records_carry_their_message_and_end_once(
    store: SqlSyncStore, engine: sa.Engine, mutations: SqlMutationStore
) -> None:
    target, folder_id = _held(store, engine)
    seen, flagged = mutations.record(target, "agent", "r1", [SEEN, FLAGGED], T0)
    open_ = mutations.open_mutations("acct")
    assert [(o.uid, o.remote_name, o.folder_id) for o in open_] == [(1, "INBOX", folder_id)] * 2
    assert mutations.open_mutations("other") == []
    mutations.begin([seen.record_id], T0)
    mutations.settle([seen.record_id], MutationState.COMPLETED, None, T0)
    mutations.settle(
        [flagged.record_id], MutationState.DEAD_LETTERED, int(MutationFailure.MESSAGE_GONE), T0
    )
    # An ending is final: a later settle changes nothing.
    mutations.settle([seen.record_id], MutationState.DEAD_LETTERED, 1, T0)
    ended = mutations.find(seen.record_id)
    assert ended is not None
    assert ended.state is MutationState.COMPLETED
    assert ended.attempts == 1
    gave_up = mutations.find(flagged.record_id)
    assert gave_up is not None
    assert gave_up.last_error_code == MutationFailure.MESSAGE_GONE
    assert mutations.open_mutations("acct") == []


def test_a_record_whose_message_went_away_is_open_without_a_uid(
    store: SqlSyncStore, engine: sa.Engine, mutations: SqlMutationStore
) -> None:
    target, folder_id = _held(store, engine)
    mutations.record(target, "agent", "r1", [SEEN], T0)
    store.remove_uids(folder_id, VALIDITY, [1])
    assert [o.uid for o in mutations.open_mutations("acct")] == [None]


def test_the_operator_listing_is_newest_first_and_filters_by_state_and_account(
    store: SqlSyncStore, engine: sa.Engine, mutations: SqlMutationStore
) -> None:
    target, _ = _held(store, engine)
    seen, flagged = mutations.record(target, "agent", "r1", [SEEN, FLAGGED], T0)
    (added,) = mutations.record(
        target, "agent", "r2", [RequestedMutation(MutationKind.ADD_KEYWORDS, "x")], T0
    )
    mutations.settle([seen.record_id], MutationState.COMPLETED, None, T0)
    mutations.settle(
        [flagged.record_id], MutationState.DEAD_LETTERED, int(MutationFailure.MESSAGE_GONE), T0
    )
    records = SqlMutationRecords(engine)
    every = tuple(MutationState)
    assert [r.record_id for r in records.listing(10, every, None)] == [
        added.record_id,
        flagged.record_id,
        seen.record_id,
    ]
    assert [r.record_id for r in records.listing(2, every, None)] == [
        added.record_id,
        flagged.record_id,
    ]
    dead = records.listing(10, (MutationState.DEAD_LETTERED,), None)
    assert [(r.record_id, r.last_error_code) for r in dead] == [
        (flagged.record_id, MutationFailure.MESSAGE_GONE)
    ]
    assert [r.record_id for r in records.listing(10, every, "acct")] == [
        added.record_id,
        flagged.record_id,
        seen.record_id,
    ]
    assert records.listing(10, every, "other") == []
    assert records.find(added.record_id) == added
    assert records.find(uuid.uuid4()) is None


def test_reviving_a_dead_lettered_record_makes_it_pending_and_shows_its_value_again(
    store: SqlSyncStore, engine: sa.Engine, mutations: SqlMutationStore
) -> None:
    target, folder_id = _held(store, engine)
    seen, flagged = mutations.record(target, "agent", "r1", [SEEN, FLAGGED], T0)
    mutations.begin([seen.record_id, flagged.record_id], T0)
    mutations.settle(
        [seen.record_id], MutationState.DEAD_LETTERED, int(MutationFailure.ATTEMPTS_SPENT), T0
    )
    # The next pass read the server's value back into the local copy.
    store.apply_flag_changes(folder_id, VALIDITY, [_unseen(1)], T0)
    records = SqlMutationRecords(engine)
    later = datetime(2026, 6, 2, tzinfo=UTC)
    revived = records.revive(seen.record_id, later)
    assert revived is not None
    assert (revived.state, revived.attempts, revived.last_error_code) == (
        MutationState.PENDING,
        0,
        None,
    )
    assert revived.updated_at.replace(tzinfo=UTC) == later
    assert [o.record_id for o in mutations.open_mutations("acct")][:1] == [seen.record_id]
    assert _seen_locally(engine, target.stored_email_id) is True
    # Only a dead-lettered record is revived: a converging one is answered as it stands.
    still = records.revive(flagged.record_id, later)
    assert still is not None
    assert (still.state, still.attempts) == (MutationState.CONVERGING, 1)
    assert records.revive(uuid.uuid4(), later) is None


def test_reviving_a_record_whose_message_is_gone_shows_nothing_and_keeps_it_open(
    store: SqlSyncStore, engine: sa.Engine, mutations: SqlMutationStore
) -> None:
    target, folder_id = _held(store, engine)
    (seen,) = mutations.record(target, "agent", "r1", [SEEN], T0)
    mutations.settle(
        [seen.record_id], MutationState.DEAD_LETTERED, int(MutationFailure.MESSAGE_GONE), T0
    )
    store.remove_uids(folder_id, VALIDITY, [1])
    revived = SqlMutationRecords(engine).revive(seen.record_id, T0)
    assert revived is not None
    assert revived.state is MutationState.PENDING
    assert [o.uid for o in mutations.open_mutations("acct")] == [None]


def _unseen(uid: int) -> FlagChange:
    return FlagChange(uid=uid, flags=RemoteFlags(keywords=frozenset({"old", "keep"})), modseq=10)


def _seen_locally(engine: sa.Engine, stored_email_id: uuid.UUID) -> bool:
    with engine.connect() as c:
        value: bool = c.execute(
            sa.select(messages.c.seen).where(messages.c.stored_email_id == stored_email_id)
        ).scalar_one()
    return value


def test_reviving_a_dead_lettered_move_changes_nothing_on_the_local_copy(
    store: SqlSyncStore, engine: sa.Engine, mutations: SqlMutationStore
) -> None:
    target, _ = _held(store, engine)
    archive = add_folder(store, "Archive", alias="Kept mail")
    move = RequestedMutation(MutationKind.MOVE, str(archive.folder_id))
    (moved,) = mutations.record(target, "agent", "r1", [move], T0)
    mutations.settle(
        [moved.record_id], MutationState.DEAD_LETTERED, int(MutationFailure.MOVE_NOT_OFFERED), T0
    )
    records = SqlMutationRecords(engine)
    revived = records.revive(moved.record_id, T0)
    assert revived is not None
    assert (revived.kind, revived.state) == (MutationKind.MOVE, MutationState.PENDING)
    with engine.connect() as c:
        row = c.execute(
            sa.select(messages.c.seq, messages.c.folder_id).where(
                messages.c.stored_email_id == target.stored_email_id
            )
        ).one()
        held = set(
            c.execute(sa.select(keywords.c.keyword).where(keywords.c.seq == row.seq)).scalars()
        )
    assert row.folder_id == target.folder_id
    assert held == {"old", "keep"}
    assert records.folder_aliases([target.folder_id, archive.folder_id, 99999]) == {
        target.folder_id: "Inbox",
        archive.folder_id: "Kept mail",
    }
    assert records.folder_aliases([]) == {}
