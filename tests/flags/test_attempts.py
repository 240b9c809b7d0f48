"""A record whose command keeps failing is given up once its attempts are spent, and a
keyword the folder will not keep permanently is reported by the record, not forgotten."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from mailfathom.app.flags.convergence import MutationConvergence
from mailfathom.app.flags.ports import StoreOutcome
from mailfathom.domain.content_state import RemoteFlags
from mailfathom.domain.errors import SyncError
from mailfathom.domain.mutations import (
    MAX_ATTEMPTS,
    MutationFailure,
    MutationKind,
    MutationState,
    RequestedMutation,
)
from store.conftest import Backend

from .test_mutation_store_contract import T0, _held


class FailingServer:
    """A server whose connection drops on every flag command."""

    def __init__(self, permanent: frozenset[str] = frozenset(), creatable: bool = True) -> None:
        self.commands = 0
        self._permanent = (creatable, permanent)

    def holds_folder(self, remote_name: str) -> bool:
        return True

    def permanent_keywords(self, remote_name: str) -> tuple[bool, frozenset[str]]:
        return self._permanent

    def current_keywords(self, remote_name: str, uids: Sequence[int]) -> dict[int, frozenset[str]]:
        return {u: frozenset() for u in uids}

    def current_flags(self, remote_name: str, uids: Sequence[int]) -> dict[int, RemoteFlags]:
        return {u: RemoteFlags() for u in uids}

    def store_flags(
        self,
        remote_name: str,
        uids: Sequence[int],
        operation: str,
        flags: Sequence[str],
        observed: Mapping[int, int] | None,
    ) -> StoreOutcome:
        self.commands += 1
        raise SyncError("connection dropped")


def test_a_record_is_dead_lettered_once_its_attempts_are_spent(backend: Backend) -> None:
    target, _ = _held(backend.held_mail())
    ledger = backend.mutations()
    (record,) = ledger.record(
        target, "agent", "r1", [RequestedMutation(MutationKind.SET_SEEN, "true")], T0
    )
    convergence = MutationConvergence(ledger, clock=lambda: datetime(2026, 6, 2, tzinfo=UTC))
    server = FailingServer()
    for attempt in range(1, MAX_ATTEMPTS + 1):
        convergence.converge("acct", server)
        found = ledger.find(record.record_id)
        assert found is not None
        assert found.attempts == attempt
        expected = (
            MutationState.DEAD_LETTERED if attempt == MAX_ATTEMPTS else MutationState.CONVERGING
        )
        assert found.state is expected
    spent = ledger.find(record.record_id)
    assert spent is not None
    assert spent.last_error_code == MutationFailure.ATTEMPTS_SPENT
    convergence.converge("acct", server)
    assert server.commands == MAX_ATTEMPTS


def test_a_keyword_the_folder_cannot_keep_is_reported_without_a_command(
    backend: Backend,
) -> None:
    target, _ = _held(backend.held_mail())
    ledger = backend.mutations()
    added = RequestedMutation(MutationKind.ADD_KEYWORDS, "kept other")
    (record,) = ledger.record(target, "agent", "r1", [added], T0)
    server = FailingServer(permanent=frozenset({"kept"}), creatable=False)
    MutationConvergence(ledger).converge("acct", server)
    found = ledger.find(record.record_id)
    assert found is not None
    assert found.state is MutationState.DEAD_LETTERED
    assert found.last_error_code == MutationFailure.KEYWORD_NOT_PERMANENT
    assert server.commands == 0
