"""The operator's hold on mutation records (`mfctl mutations`): list them, read one, send a
dead-lettered one back to the synchronization run. It answers with what a record holds about
the change (its kind, state, attempts and failure code, and the aliases of the folders a
move leaves and goes to: configuration, not content), never the keywords it names."""

from __future__ import annotations

import enum
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import structlog

from mailfathom.app.flags.ports import MutationRecords
from mailfathom.domain.mutations import MutationKind, MutationRecord, MutationState

log = structlog.get_logger("mailfathom.flags")

# What `listing` shows when no state is named: everything not yet completed.
UNFINISHED = (MutationState.PENDING, MutationState.CONVERGING, MutationState.DEAD_LETTERED)


class Retried(enum.Enum):
    NOW = "now"
    # Pending, converging or completed: a retry changes nothing.
    NOT_DEAD_LETTERED = "not-dead-lettered"


@dataclass(frozen=True, slots=True)
class Retry:
    record: MutationRecord
    outcome: Retried


class MutationAdministration:
    def __init__(
        self,
        records: MutationRecords,
        wake: Callable[[str], None] = lambda account_id: None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._records = records
        # Tells the account's continuous synchronization run (in this process) that a
        # record waits; a run in another process finds it on its next pass.
        self._wake = wake
        self._clock = clock

    def listing(
        self,
        limit: int | None,
        states: Sequence[MutationState] | None = None,
        account_id: str | None = None,
    ) -> list[MutationRecord]:
        return self._records.listing(limit, tuple(states or UNFINISHED), account_id)

    def find(self, record_id: uuid.UUID) -> MutationRecord | None:
        return self._records.find(record_id)

    def folder_aliases(self, records: Sequence[MutationRecord]) -> dict[int, str]:
        """The alias of every folder these records name: the one each message was in when
        the change was asked for, and a move's destination."""
        named = {r.folder_id for r in records}
        named.update(d for d in map(destination_of, records) if d is not None)
        return self._records.folder_aliases(named)

    def retry(self, record_id: uuid.UUID) -> Retry | None:
        """A dead-lettered record goes back to pending with its attempts reset, and the
        account's run is woken; any other record is answered as it stands."""
        before = self._records.find(record_id)
        if before is None:
            return None
        if before.state is not MutationState.DEAD_LETTERED:
            return Retry(before, Retried.NOT_DEAD_LETTERED)
        after = self._records.revive(record_id, self._clock())
        if after is None or after.state is not MutationState.PENDING:
            return Retry(after or before, Retried.NOT_DEAD_LETTERED)
        log.info(
            "flags.change_retried",
            account=after.account_id,
            change=after.kind.value,
            change_record_id=str(after.record_id),
        )
        self._wake(after.account_id)
        return Retry(after, Retried.NOW)


def destination_of(record: MutationRecord) -> int | None:
    """The folder a move record sends its message to; None for any other change."""
    if record.kind is not MutationKind.MOVE:
        return None
    try:
        return int(record.value)
    except ValueError:
        return None
