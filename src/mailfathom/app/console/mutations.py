"""The console's mailbox changes: flag, keyword and move records still open or
dead-lettered, with the code that stopped each, and the owner's retry of a dead-lettered one.

Read and retried through the operator's own use case (`mfctl mutations`). A keyword change
is shown by how many keywords it names, never which: keywords are the owner's labels, and the
page shows what the command shows."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from mailfathom.app.flags.administer_mutations import (
    MutationAdministration,
    Retry,
    destination_of,
)
from mailfathom.domain.mutations import (
    KEYWORD_KINDS,
    OPEN_STATES,
    MutationRecord,
    MutationState,
    keywords_of,
)

SHOWN = 200
"""How many open records the page lists, newest first, after every dead-lettered one."""


@dataclass(frozen=True, slots=True)
class ChangeEntry:
    record: MutationRecord
    # The alias of the folder the message was in, and of a move's destination; None when
    # the folder is no longer held.
    folder: str | None
    destination: str | None
    # How many keywords a keyword change names; None for any other change.
    keywords: int | None


class ConsoleMutations:
    def __init__(self, administration: MutationAdministration) -> None:
        self._administration = administration

    def entries(self, limit: int = SHOWN) -> list[ChangeEntry]:
        """Every dead-lettered record, newest first, then the newest `limit` open ones: a
        change the owner may retry is never left off however many newer ones wait."""
        records = self._administration.listing(None, (MutationState.DEAD_LETTERED,))
        records += self._administration.listing(limit, tuple(OPEN_STATES))
        aliases = self._administration.folder_aliases(records)
        return [_entry(r, aliases) for r in records]

    def retry(self, record_id: str) -> Retry | None:
        """The operator's retry (`mfctl mutations retry`); None when the text names no
        record held here."""
        try:
            identifier = uuid.UUID(record_id)
        except ValueError:
            return None
        return self._administration.retry(identifier)


def _entry(record: MutationRecord, aliases: dict[int, str]) -> ChangeEntry:
    destination = destination_of(record)
    return ChangeEntry(
        record,
        aliases.get(record.folder_id),
        None if destination is None else aliases.get(destination),
        len(keywords_of(record.value)) if record.kind in KEYWORD_KINDS else None,
    )
