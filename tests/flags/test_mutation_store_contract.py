"""What flag changes rely on from the mutation record store, on SQLite, PostgreSQL and the
in-memory fake: one commit per call, a retry answering the first call's records, a reused
identity refused for a different value, the local copy showing the asked value, and the
record lifecycle."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest

from mailfathom.app.flags.ports import MutationTarget, RequestIdentityTaken
from mailfathom.app.sync.types import FlagChange
from mailfathom.domain.content_state import RemoteFlags
from mailfathom.domain.mutations import (
    MutationFailure,
    MutationKind,
    MutationState,
    RequestedMutation,
)
from store.conftest import Backend
from store.held_mail import HeldMail, Mutations
from store.reading_builders import VALIDITY

T0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
SEEN = RequestedMutation(MutationKind.SET_SEEN, "true")
FLAGGED = RequestedMutation(MutationKind.SET_FLAGGED, "true")


@pytest.fixture
def mail(backend: Backend) -> HeldMail:
    return backend.held_mail()


@pytest.fixture
def mutations(backend: Backend) -> Mutations:
    return backend.mutations()


def _held(mail: HeldMail) -> tuple[MutationTarget, int]:
    """Two messages in the account's INBOX (published as "Inbox"); the first, carrying the
    keywords "old" and "keep", is the target."""
    folder_id = mail.ensure_folder("acct", "INBOX", "Inbox")
    mail.record_progress(folder_id, VALIDITY, T0)
    first, _ = mail.add_messages(
        folder_id,
        VALIDITY,
        [(1, RemoteFlags(keywords=frozenset({"old", "keep"})), 1), (2, RemoteFlags(), 2)],
        T0,
    )
    return MutationTarget(first, "acct", folder_id, "Inbox"), folder_id


def test_an_email_in_a_readable_folder_is_a_target_and_one_outside_is_not(
    mail: HeldMail, mutations: Mutations
) -> None:
    target, folder_id = _held(mail)
    assert mutations.target(target.stored_email_id, [folder_id]) == target
    assert mutations.target(target.stored_email_id, []) is None
    assert mutations.target(target.stored_email_id, [folder_id + 1000]) is None
    assert mutations.target(uuid.uuid4(), [folder_id]) is None


def test_a_row_of_an_older_uidvalidity_names_no_remote_message_and_is_no_target(
    mail: HeldMail, mutations: Mutations
) -> None:
    target, folder_id = _held(mail)
    mail.record_progress(folder_id, VALIDITY + 1, T0)
    assert mutations.target(target.stored_email_id, [folder_id]) is None


def test_one_call_writes_one_pending_record_per_value_and_the_local_copy_shows_them(
    mail: HeldMail, mutations: Mutations
) -> None:
    target, _ = _held(mail)
    added = RequestedMutation(MutationKind.ADD_KEYWORDS, "new")
    records = mutations.record(target, "agent", "r1", [SEEN, FLAGGED, added], T0)
    assert [r.kind for r in records] == [
        MutationKind.SET_SEEN,
        MutationKind.SET_FLAGGED,
        MutationKind.ADD_KEYWORDS,
    ]
    assert {r.state for r in records} == {MutationState.PENDING}
    assert all(r.attempts == 0 and r.last_error_code is None for r in records)
    _, shown = mail.flags_of(target.stored_email_id)
    assert (shown.seen, shown.flagged) == (True, True)
    assert shown.keywords == {"old", "keep", "new"}


def test_replace_and_remove_show_on_the_local_copy_ignoring_case(
    mail: HeldMail, mutations: Mutations
) -> None:
    target, _ = _held(mail)
    mutations.record(
        target, "agent", "r1", [RequestedMutation(MutationKind.SET_KEYWORDS, "keep x")], T0
    )
    mutations.record(
        target, "agent", "r2", [RequestedMutation(MutationKind.REMOVE_KEYWORDS, "x")], T0
    )
    assert mail.flags_of(target.stored_email_id)[1].keywords == {"keep"}


def test_a_retry_answers_the_first_records_as_they_stand(
    mail: HeldMail, mutations: Mutations
) -> None:
    target, _ = _held(mail)
    first = mutations.record(target, "agent", "r1", [SEEN, FLAGGED], T0)
    mutations.begin([first[0].record_id], T0)
    again = mutations.record(target, "agent", "r1", [SEEN, FLAGGED], T0)
    assert [r.record_id for r in again] == [r.record_id for r in first]
    assert [r.state for r in again] == [MutationState.CONVERGING, MutationState.PENDING]
    other = mutations.record(target, "someone-else", "r1", [SEEN], T0)
    assert other[0].record_id != first[0].record_id


def test_a_reused_identity_for_another_value_writes_nothing_of_the_call(
    mail: HeldMail, mutations: Mutations
) -> None:
    target, _ = _held(mail)
    mutations.record(target, "agent", "r1", [SEEN], T0)
    unseen = RequestedMutation(MutationKind.SET_SEEN, "false")
    with pytest.raises(RequestIdentityTaken):
        mutations.record(target, "agent", "r1", [FLAGGED, unseen], T0)
    assert [r.kind for r in mutations.open_mutations("acct")] == [MutationKind.SET_SEEN]
    assert mail.flags_of(target.stored_email_id)[1].flagged is False


@pytest.mark.parametrize(
    ("first", "then"),
    [
        ([SEEN], [SEEN, FLAGGED]),
        ([SEEN, FLAGGED], [SEEN]),
        ([SEEN, FLAGGED], [FLAGGED]),
    ],
    ids=["a-change-added", "a-change-left-out", "another-subset"],
)
def test_a_reused_identity_is_a_retry_only_for_the_whole_request(
    mail: HeldMail,
    mutations: Mutations,
    first: list[RequestedMutation],
    then: list[RequestedMutation],
) -> None:
    """A request identity names the whole request: asking more, or less, under it is not a
    retry and writes nothing."""
    target, _ = _held(mail)
    written = mutations.record(target, "agent", "r1", first, T0)
    with pytest.raises(RequestIdentityTaken):
        mutations.record(target, "agent", "r1", then, T0)
    assert [r.record_id for r in mutations.open_mutations("acct")] == [r.record_id for r in written]
    assert mail.flags_of(target.stored_email_id)[1].flagged is (FLAGGED in first)
    again = mutations.record(target, "agent", "r1", first, T0)
    assert [r.record_id for r in again] == [r.record_id for r in written]


def test_open_records_carry_their_message_and_end_once(
    mail: HeldMail, mutations: Mutations
) -> None:
    target, folder_id = _held(mail)
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
    mail: HeldMail, mutations: Mutations
) -> None:
    target, folder_id = _held(mail)
    mutations.record(target, "agent", "r1", [SEEN], T0)
    mail.remove_uids(folder_id, VALIDITY, [1])
    assert [o.uid for o in mutations.open_mutations("acct")] == [None]


def test_the_operator_listing_is_newest_first_and_filters_by_state_and_account(
    backend: Backend, mail: HeldMail, mutations: Mutations
) -> None:
    target, _ = _held(mail)
    seen, flagged = mutations.record(target, "agent", "r1", [SEEN, FLAGGED], T0)
    (added,) = mutations.record(
        target, "agent", "r2", [RequestedMutation(MutationKind.ADD_KEYWORDS, "x")], T0
    )
    mutations.settle([seen.record_id], MutationState.COMPLETED, None, T0)
    mutations.settle(
        [flagged.record_id], MutationState.DEAD_LETTERED, int(MutationFailure.MESSAGE_GONE), T0
    )
    records = backend.mutation_records()
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
    backend: Backend, mail: HeldMail, mutations: Mutations
) -> None:
    target, folder_id = _held(mail)
    seen, flagged = mutations.record(target, "agent", "r1", [SEEN, FLAGGED], T0)
    mutations.begin([seen.record_id, flagged.record_id], T0)
    mutations.settle(
        [seen.record_id], MutationState.DEAD_LETTERED, int(MutationFailure.ATTEMPTS_SPENT), T0
    )
    # The next pass read the server's value back into the local copy.
    mail.apply_flag_changes(folder_id, VALIDITY, [_unseen(1)], T0)
    records = backend.mutation_records()
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
    assert mail.flags_of(target.stored_email_id)[1].seen is True
    # Only a dead-lettered record is revived: a converging one is answered as it stands.
    still = records.revive(flagged.record_id, later)
    assert still is not None
    assert (still.state, still.attempts) == (MutationState.CONVERGING, 1)
    assert records.revive(uuid.uuid4(), later) is None


def test_reviving_a_record_whose_message_is_gone_shows_nothing_and_keeps_it_open(
    backend: Backend, mail: HeldMail, mutations: Mutations
) -> None:
    target, folder_id = _held(mail)
    (seen,) = mutations.record(target, "agent", "r1", [SEEN], T0)
    mutations.settle(
        [seen.record_id], MutationState.DEAD_LETTERED, int(MutationFailure.MESSAGE_GONE), T0
    )
    mail.remove_uids(folder_id, VALIDITY, [1])
    revived = backend.mutation_records().revive(seen.record_id, T0)
    assert revived is not None
    assert revived.state is MutationState.PENDING
    assert [o.uid for o in mutations.open_mutations("acct")] == [None]


def _unseen(uid: int) -> FlagChange:
    return FlagChange(uid=uid, flags=RemoteFlags(keywords=frozenset({"old", "keep"})), modseq=10)


def test_reviving_a_dead_lettered_move_changes_nothing_on_the_local_copy(
    backend: Backend, mail: HeldMail, mutations: Mutations
) -> None:
    target, _ = _held(mail)
    archive = mail.ensure_folder("acct", "Archive", "Kept mail")
    move = RequestedMutation(MutationKind.MOVE, str(archive))
    (moved,) = mutations.record(target, "agent", "r1", [move], T0)
    mutations.settle(
        [moved.record_id], MutationState.DEAD_LETTERED, int(MutationFailure.MOVE_NOT_OFFERED), T0
    )
    records = backend.mutation_records()
    revived = records.revive(moved.record_id, T0)
    assert revived is not None
    assert (revived.kind, revived.state) == (MutationKind.MOVE, MutationState.PENDING)
    folder_id, shown = mail.flags_of(target.stored_email_id)
    assert folder_id == target.folder_id
    assert shown.keywords == {"old", "keep"}
    assert records.folder_aliases([target.folder_id, archive, 99999]) == {
        target.folder_id: "Inbox",
        archive: "Kept mail",
    }
    assert records.folder_aliases([]) == {}


def test_a_runs_own_mod_sequences_raise_the_local_copys_and_never_lower_them(
    mail: HeldMail, mutations: Mutations
) -> None:
    target, folder_id = _held(mail)
    other = mail.ensure_folder("acct", "Other", "Other")
    mail.record_progress(other, VALIDITY, T0)
    mail.add_messages(other, VALIDITY, [(1, RemoteFlags(), 3)], T0)
    mutations.record(target, "agent", "r1", [SEEN], T0)

    def modseq() -> int | None:
        (open_,) = mutations.open_mutations("acct")
        return open_.modseq

    assert modseq() == 1
    mutations.advance(folder_id, {1: 40, 99: 50})
    assert modseq() == 40
    mutations.advance(folder_id, {1: 12})
    assert modseq() == 40
    # Another folder's UID 1 is another message; a row of an older UIDVALIDITY is no
    # message of the folder any more.
    mutations.advance(other, {1: 90})
    assert modseq() == 40
    mail.record_progress(folder_id, VALIDITY + 1, T0)
    mutations.advance(folder_id, {1: 70})
    mail.record_progress(folder_id, VALIDITY, T0)
    assert modseq() == 40
    mutations.advance(folder_id, {})
    assert modseq() == 40
