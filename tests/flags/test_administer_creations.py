"""The operator's hold on folder creation records beside the other changes, at the use case,
on the in-memory stores: one listing of both kinds newest first, either kind found by its
identifier, and the retry of a dead-lettered creation, refused when its alias was taken
meanwhile."""

from __future__ import annotations

import uuid

from mailfathom.app.flags.administer_mutations import MutationAdministration, Retried
from mailfathom.app.flags.set_mail_flags import FlagChangeRequest
from mailfathom.domain.mutations import (
    FolderCreationRecord,
    MutationFailure,
    MutationRecord,
    MutationState,
)

from .test_set_mail_flags_use_case import AGENT, T0, Mailboxes

DEAD = MutationState.DEAD_LETTERED


def _administration(boxes: Mailboxes) -> MutationAdministration:
    return MutationAdministration(
        boxes.memory.mutations, boxes.memory.creations, wake=boxes.woken.append, clock=boxes.clock
    )


def _ids(found: list[MutationRecord | FolderCreationRecord]) -> list[uuid.UUID]:
    return [r.record_id for r in found]


def test_the_listing_holds_both_kinds_newest_first() -> None:
    boxes = Mailboxes()
    creations = boxes.memory.creations
    oldest = creations.request("work", "Receipts", "Receipts", None, "agent", "c1", T0)
    boxes.clock.advance(60)
    (seen,) = boxes.flags().record(AGENT, FlagChangeRequest(str(boxes.mail), seen=True)).records
    boxes.clock.advance(60)
    newest = creations.request(
        "work", "2026", "Inbox/2026", boxes.inbox, "agent", "c2", boxes.clock()
    )
    creations.settle(oldest.creation_id, DEAD, int(MutationFailure.FOLDER_EXISTS), boxes.clock())
    administration = _administration(boxes)

    every = tuple(MutationState)
    assert _ids(administration.changes(10, every)) == [
        newest.creation_id,
        seen.record_id,
        oldest.creation_id,
    ]
    assert _ids(administration.changes(2, every)) == [newest.creation_id, seen.record_id]
    assert _ids(administration.changes(10)) == [
        newest.creation_id,
        seen.record_id,
        oldest.creation_id,
    ]
    assert _ids(administration.changes(10, [DEAD])) == [oldest.creation_id]
    assert administration.changes(10, every, "elsewhere") == []
    # The flag records alone, as the console lists them.
    assert _ids(list(administration.listing(10, every))) == [seen.record_id]

    found = administration.find(newest.creation_id)
    assert isinstance(found, FolderCreationRecord)
    assert (found.alias, found.parent_folder_id) == ("Inbox/2026", boxes.inbox)
    assert isinstance(administration.find(seen.record_id), MutationRecord)
    assert administration.find(uuid.uuid4()) is None
    # A creation names its parent folder; one at the top level names none.
    assert administration.folder_aliases([found]) == {boxes.inbox: "Inbox"}
    top = administration.find(oldest.creation_id)
    assert top is not None
    assert administration.folder_aliases([top]) == {}


def test_the_operator_retries_a_dead_lettered_folder_creation_once() -> None:
    boxes = Mailboxes()
    creations = boxes.memory.creations
    record = creations.request("work", "Receipts", "Receipts", None, "agent", "c1", T0)
    administration = _administration(boxes)
    pending = administration.retry(record.creation_id)
    assert pending is not None
    assert (pending.outcome, pending.record.state) == (
        Retried.NOT_DEAD_LETTERED,
        MutationState.PENDING,
    )
    creations.begin(record.creation_id, "Receipts", T0)
    creations.settle(record.creation_id, DEAD, int(MutationFailure.ATTEMPTS_SPENT), T0)
    boxes.clock.advance(3600)

    retry = administration.retry(record.creation_id)
    assert retry is not None
    assert retry.outcome is Retried.NOW
    assert isinstance(retry.record, FolderCreationRecord)
    assert (
        retry.record.state,
        retry.record.attempts,
        retry.record.last_error_code,
        retry.record.updated_at,
    ) == (MutationState.PENDING, 0, None, boxes.clock())
    assert boxes.woken == ["work"]
    again = administration.retry(record.creation_id)
    assert again is not None
    assert again.outcome is Retried.NOT_DEAD_LETTERED
    assert boxes.woken == ["work"]


def test_a_folder_creation_whose_alias_was_taken_meanwhile_stays_dead_lettered() -> None:
    boxes = Mailboxes()
    creations = boxes.memory.creations
    record = creations.request("work", "Receipts", "Receipts", None, "agent", "c1", T0)
    creations.settle(record.creation_id, DEAD, int(MutationFailure.FOLDER_EXISTS), T0)
    # Dead-lettered, it claims its alias no more: a later call asked for it again.
    creations.request("work", "RECEIPTS", "RECEIPTS", None, "agent", "c2", T0)
    administration = _administration(boxes)
    before = administration.find(record.creation_id)

    retry = administration.retry(record.creation_id)
    assert retry is not None
    assert retry.outcome is Retried.ALIAS_CLAIMED
    assert retry.record == before
    assert administration.find(record.creation_id) == before
    assert boxes.woken == []
