"""Folder creation records as the operator sees them (`mfctl mutations`), on SQLite,
PostgreSQL and the in-memory fake: listed newest first under the state and account filters,
read by identifier, and a dead-lettered one sent back to pending unless its alias is taken
meanwhile."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest

from mailfathom.app.flags.ports import AliasClaimed
from mailfathom.domain.mutations import FolderCreationRecord, MutationFailure, MutationState
from store.conftest import Backend
from store.held_mail import Creations

T0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
T1 = datetime(2026, 6, 1, 13, 0, tzinfo=UTC)
T2 = datetime(2026, 6, 2, 9, 0, tzinfo=UTC)
EXISTS = int(MutationFailure.FOLDER_EXISTS)


def _dead(creations: Creations, record_id: uuid.UUID, remote_name: str) -> None:
    """One attempt noted under `remote_name`, then dead-lettered as a name already taken."""
    creations.begin(record_id, remote_name, T0)
    creations.settle(record_id, MutationState.DEAD_LETTERED, EXISTS, T1)


def _dead_receipts(creations: Creations, request_id: str = "r1") -> uuid.UUID:
    """A record of the top-level folder `Receipts` of `acct`, dead-lettered."""
    record = creations.request("acct", "Receipts", "Receipts", None, "agent", request_id, T0)
    _dead(creations, record.creation_id, "Receipts")
    return record.creation_id


def test_the_listing_is_newest_first_and_filters_by_state_and_account(backend: Backend) -> None:
    creations = backend.folder_creations()
    parent = backend.held_mail().ensure_folder("acct", "Projects", "Projects")
    garden = creations.request("acct", "Garden", "Projects/Garden", parent, "agent", "r1", T0)
    bills = creations.request("acct", "Bills", "Bills", None, "helper", "r2", T0)
    elsewhere = creations.request("other", "Bills", "Bills", None, "agent", "r1", T0)
    _dead(creations, garden.creation_id, "Projects/Garden")
    creations.settle(bills.creation_id, MutationState.COMPLETED, None, T1)
    records = backend.creation_records()
    every = tuple(MutationState)

    def ids(found: list[FolderCreationRecord]) -> list[uuid.UUID]:
        return [r.record_id for r in found]

    newest = [elsewhere.creation_id, bills.creation_id, garden.creation_id]
    assert ids(records.listing(10, every, None)) == newest
    assert ids(records.listing(None, every, None)) == newest
    assert ids(records.listing(2, every, None)) == newest[:2]
    assert ids(records.listing(10, every, "acct")) == newest[1:]
    assert ids(records.listing(10, (MutationState.PENDING,), None)) == [elsewhere.creation_id]
    assert records.listing(10, every, "nobody") == []
    assert records.listing(10, (MutationState.DEAD_LETTERED,), "acct") == [
        FolderCreationRecord(
            record_id=garden.creation_id,
            account_id="acct",
            alias="Projects/Garden",
            parent_folder_id=parent,
            requester="agent",
            state=MutationState.DEAD_LETTERED,
            attempts=1,
            last_error_code=EXISTS,
            created_at=T0,
            updated_at=T1,
        )
    ]
    found = records.find(bills.creation_id)
    assert found is not None
    assert (found.alias, found.parent_folder_id, found.requester, found.state) == (
        "Bills",
        None,
        "helper",
        MutationState.COMPLETED,
    )
    assert records.find(uuid.uuid4()) is None


def test_reviving_a_dead_lettered_record_makes_it_pending_with_no_attempt(
    backend: Backend,
) -> None:
    creations = backend.folder_creations()
    record_id = _dead_receipts(creations)
    records = backend.creation_records()
    revived = records.revive(record_id, T2)
    assert revived is not None
    assert (revived.state, revived.attempts, revived.last_error_code, revived.updated_at) == (
        MutationState.PENDING,
        0,
        None,
        T2,
    )
    assert records.find(record_id) == revived
    # Pending again, it claims its alias: a call asking for it now is refused.
    assert creations.alias_claimed("acct", "receipts")
    # Only a dead-lettered record is revived: any other is answered as it stands.
    assert records.revive(record_id, T0) == revived
    creations.begin(record_id, "Receipts", T2)
    still = records.revive(record_id, T0)
    assert still is not None
    assert (still.state, still.attempts) == (MutationState.CONVERGING, 1)
    assert records.revive(uuid.uuid4(), T2) is None


@pytest.mark.parametrize("claimant", ["pending", "completed", "served"])
def test_a_record_whose_alias_is_taken_meanwhile_stays_dead_lettered(
    backend: Backend, claimant: str
) -> None:
    creations = backend.folder_creations()
    record_id = _dead_receipts(creations)
    if claimant == "served":
        # The operator mapped the folder already on the server under the same alias.
        backend.held_mail().ensure_folder("acct", "Receipts", "RECEIPTS")
    else:
        # A later call asked for the same alias (its record no longer claimed by this one).
        other = creations.request("acct", "receipts", "receipts", None, "agent", "r2", T1)
        if claimant == "completed":
            creations.settle(other.creation_id, MutationState.COMPLETED, None, T1)
    records = backend.creation_records()
    before = records.find(record_id)
    with pytest.raises(AliasClaimed):
        records.revive(record_id, T2)
    assert records.find(record_id) == before


def test_an_alias_only_a_withheld_folder_or_a_given_up_record_carries_is_free(
    backend: Backend,
) -> None:
    creations = backend.folder_creations()
    record_id = _dead_receipts(creations)
    _dead_receipts(creations, "r2")
    backend.held_mail().ensure_folder("acct", "Hidden", "Receipts", visible=False)
    backend.held_mail().ensure_folder("other", "Receipts", "Receipts")
    revived = backend.creation_records().revive(record_id, T2)
    assert revived is not None
    assert revived.state is MutationState.PENDING
