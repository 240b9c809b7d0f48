"""What organize_email relies on from the record store, on SQLite, PostgreSQL and the
in-memory fake: the emails a call may reach, one record per email in one commit, a retry
answering the first call's records, and a reused identity writing nothing of the call."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest

from mailfathom.app.flags.ports import MutationTarget, RequestIdentityTaken
from mailfathom.domain.content_state import RemoteFlags
from mailfathom.domain.mutations import MutationKind, MutationState, RequestedMutation
from store.conftest import Backend

T0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
LABEL = RequestedMutation(MutationKind.ADD_KEYWORDS, "later")
KEPT = RemoteFlags(keywords=frozenset({"old"}))


def _inbox(backend: Backend) -> tuple[int, list[uuid.UUID]]:
    """Three messages in the account's INBOX (published as "Inbox")."""
    mail = backend.held_mail()
    inbox = mail.ensure_folder("acct", "INBOX", "Inbox")
    mail.record_progress(inbox, 7, T0)
    return inbox, mail.add_messages(inbox, 7, [(n, KEPT, n) for n in (1, 2, 3)], T0)


def test_the_targets_are_the_emails_of_the_folders_given_with_a_current_row(
    backend: Backend,
) -> None:
    inbox, (a, b, c) = _inbox(backend)
    mail = backend.held_mail()
    other = mail.ensure_folder("acct", "Other", "Other")
    mail.record_progress(other, 3, T0)
    (elsewhere,) = mail.add_messages(other, 3, [(1, RemoteFlags(), 1)], T0)
    store = backend.organize()
    found = store.targets([a, c, elsewhere, uuid.uuid4()], [inbox])
    assert found == {
        a: MutationTarget(a, "acct", inbox, "Inbox"),
        c: MutationTarget(c, "acct", inbox, "Inbox"),
    }
    assert set(store.targets([a, elsewhere], [inbox, other])) == {a, elsewhere}
    assert store.targets([a], []) == {}
    assert store.targets([], [inbox]) == {}
    # A new UIDVALIDITY leaves every row of the folder naming no message of it.
    mail.record_progress(inbox, 8, T0)
    assert store.targets([a, b, c], [inbox]) == {}


def test_one_record_per_email_in_the_order_given_and_the_labels_shown_at_once(
    backend: Backend,
) -> None:
    inbox, (a, b, c) = _inbox(backend)
    store = backend.organize()
    targets = [MutationTarget(e, "acct", inbox, "Inbox") for e in (c, a)]
    records = store.record_each(targets, "agent", "r1", LABEL, T0)
    assert [(r.stored_email_id, r.kind, r.value, r.state) for r in records] == [
        (c, MutationKind.ADD_KEYWORDS, "later", MutationState.PENDING),
        (a, MutationKind.ADD_KEYWORDS, "later", MutationState.PENDING),
    ]
    mail = backend.held_mail()
    assert [mail.flags_of(e)[1].keywords for e in (a, b, c)] == [
        {"old", "later"},
        {"old"},
        {"old", "later"},
    ]
    ledger = backend.mutations()
    assert [o.record_id for o in ledger.open_mutations("acct")] == [r.record_id for r in records]


def test_a_move_is_recorded_and_shows_nothing_until_it_has_happened(backend: Backend) -> None:
    inbox, (a, _, _) = _inbox(backend)
    archive = backend.held_mail().ensure_folder("acct", "Archive", "Archive")
    move = RequestedMutation(MutationKind.MOVE, str(archive))
    (record,) = backend.organize().record_each(
        [MutationTarget(a, "acct", inbox, "Inbox")], "agent", "r1", move, T0
    )
    assert (record.kind, record.value, record.folder_id) == (MutationKind.MOVE, str(archive), inbox)
    assert backend.held_mail().flags_of(a) == (inbox, KEPT)


def test_a_retry_answers_the_records_as_they_stand_and_a_reused_identity_writes_nothing(
    backend: Backend,
) -> None:
    inbox, (a, b, c) = _inbox(backend)
    store = backend.organize()
    first = store.record_each(
        [MutationTarget(e, "acct", inbox, "Inbox") for e in (a, b)], "agent", "r1", LABEL, T0
    )
    backend.mutations().begin([first[0].record_id], T0)
    again = store.record_each(
        [MutationTarget(e, "acct", inbox, "Inbox") for e in (a, b)], "agent", "r1", LABEL, T0
    )
    assert [r.record_id for r in again] == [r.record_id for r in first]
    assert [r.state for r in again] == [MutationState.CONVERGING, MutationState.PENDING]
    # The same identity asking another value of b refuses the whole call: c gets nothing.
    other = RequestedMutation(MutationKind.ADD_KEYWORDS, "sooner")
    with pytest.raises(RequestIdentityTaken):
        store.record_each(
            [MutationTarget(e, "acct", inbox, "Inbox") for e in (c, b)], "agent", "r1", other, T0
        )
    every = backend.mutation_records().listing(100, tuple(MutationState), None)
    assert sorted(r.record_id for r in every) == sorted(r.record_id for r in first)
    assert backend.held_mail().flags_of(c)[1].keywords == {"old"}


def test_a_reused_identity_is_a_retry_only_for_the_same_emails_and_change(
    backend: Backend,
) -> None:
    """The emails are part of the request: more or fewer of them under one identity is
    another request, refused whole; the same ones in another order are the same request."""
    inbox, (a, b, c) = _inbox(backend)
    store = backend.organize()

    def targets(*emails: uuid.UUID) -> list[MutationTarget]:
        return [MutationTarget(e, "acct", inbox, "Inbox") for e in emails]

    first = store.record_each(targets(a, b), "agent", "r1", LABEL, T0)
    for emails in ((a, b, c), (a,), (c, a)):
        with pytest.raises(RequestIdentityTaken):
            store.record_each(targets(*emails), "agent", "r1", LABEL, T0)
    every = backend.mutation_records().listing(100, tuple(MutationState), None)
    assert sorted(r.record_id for r in every) == sorted(r.record_id for r in first)
    assert backend.held_mail().flags_of(c)[1].keywords == {"old"}
    reordered = store.record_each(targets(b, a), "agent", "r1", LABEL, T0)
    assert [r.record_id for r in reordered] == [first[1].record_id, first[0].record_id]
    # A flag change under the same identity on one of these emails is another request too.
    with pytest.raises(RequestIdentityTaken):
        backend.mutations().record(
            targets(a)[0], "agent", "r1", [RequestedMutation(MutationKind.SET_SEEN, "true")], T0
        )
    # An email the identity never named is a request of its own (the identity is per email).
    (alone,) = store.record_each(targets(c), "agent", "r1", LABEL, T0)
    assert alone.record_id not in {r.record_id for r in first}
