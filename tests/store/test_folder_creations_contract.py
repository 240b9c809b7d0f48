"""What organize_email's createFolder relies on from the folder creation records, on SQLite,
PostgreSQL and the in-memory fake: one record per request identity, a reused identity told
apart when it asks for another folder, and the aliases the records claim."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from mailfathom.app.organize.ports import FolderCreationRequested
from mailfathom.domain.mutations import MutationFailure, MutationState
from store.conftest import Backend

T0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def test_a_request_is_one_pending_record_per_identity(backend: Backend) -> None:
    creations = backend.folder_creations()
    parent = backend.held_mail().ensure_folder("acct", "Projects", "Projects")
    record = creations.request("acct", "Garden", "Projects/Garden", parent, "agent", "r1", T0)
    assert (record.account_id, record.name, record.alias, record.parent_folder_id) == (
        "acct",
        "Garden",
        "Projects/Garden",
        parent,
    )
    assert (record.state, record.last_error_code, record.folder_id) == (
        MutationState.PENDING,
        None,
        None,
    )
    assert creations.request("acct", "Garden", "Projects/Garden", parent, "agent", "r1", T0) == (
        record
    )
    assert creations.held("acct", "agent", "r1") == record
    assert creations.held("acct", "agent", "r2") is None
    assert creations.held("acct", "someone-else", "r1") is None
    assert creations.held("other", "agent", "r1") is None


@pytest.mark.parametrize(("name", "parent"), [("Kitchen", True), ("Garden", False)])
def test_a_reused_identity_asking_for_another_folder_is_told_apart(
    backend: Backend, name: str, parent: bool
) -> None:
    creations = backend.folder_creations()
    projects = backend.held_mail().ensure_folder("acct", "Projects", "Projects")
    creations.request("acct", "Garden", "Projects/Garden", projects, "agent", "r1", T0)
    with pytest.raises(FolderCreationRequested):
        creations.request("acct", name, name, projects if parent else None, "agent", "r1", T0)
    # Another caller, or another account, may use the same request identity.
    assert creations.request("acct", "Kitchen", "Kitchen", None, "someone-else", "r1", T0)
    assert creations.request("other", "Kitchen", "Kitchen", None, "agent", "r1", T0)


def test_an_alias_is_claimed_by_a_record_not_given_up_without_regard_to_case(
    backend: Backend,
) -> None:
    creations = backend.folder_creations()
    assert not creations.alias_claimed("acct", "Receipts")
    record = creations.request("acct", "Receipts", "Receipts", None, "agent", "r1", T0)
    assert creations.alias_claimed("acct", "RECEIPTS")
    assert not creations.alias_claimed("other", "Receipts")
    creations.settle(record.creation_id, MutationState.COMPLETED, None, T0)
    assert creations.alias_claimed("acct", "receipts")
    given_up = creations.request("acct", "Bills", "Bills", None, "agent", "r2", T0)
    creations.settle(
        given_up.creation_id, MutationState.DEAD_LETTERED, int(MutationFailure.FOLDER_EXISTS), T0
    )
    assert not creations.alias_claimed("acct", "Bills")
    held = creations.held("acct", "agent", "r2")
    assert held is not None
    assert (held.state, held.last_error_code) == (
        MutationState.DEAD_LETTERED,
        MutationFailure.FOLDER_EXISTS,
    )
