"""The console's mailbox changes: flag, keyword and move records and folder creation records
still open or dead-lettered, with the code that stopped each, and the owner's retry of a
dead-lettered one.

Read and retried through the operator's own use case (`mfctl mutations`). A keyword change
is shown by how many keywords it names, never which: keywords are the owner's labels, and the
page shows what the command shows. A folder creation is shown by the alias the new folder is
published under and its parent's (configuration, as on the command line)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from mailfathom.app.flags.administer_mutations import (
    AnyRecord,
    MutationAdministration,
    Retry,
    destination_of,
)
from mailfathom.domain.mutations import (
    KEYWORD_KINDS,
    OPEN_STATES,
    FolderCreationRecord,
    MutationState,
    keywords_of,
)

SHOWN = 200
"""How many open records the page lists, newest first, after every dead-lettered one."""


@dataclass(frozen=True, slots=True)
class ChangeEntry:
    record: AnyRecord
    # The alias of the folder the message was in, or the one a new folder is published
    # under; None when the folder is no longer held.
    folder: str | None
    # The alias of a move's destination; None for any other change or when it is no longer
    # held.
    destination: str | None
    # How many keywords a keyword change names; None for any other change.
    keywords: int | None
    # The alias of the folder a new folder is created under; None at the top level, for a
    # message's change, or when that folder is no longer held.
    parent: str | None = None


class ConsoleMutations:
    def __init__(self, administration: MutationAdministration) -> None:
        self._administration = administration

    def entries(self, limit: int = SHOWN) -> list[ChangeEntry]:
        """Every dead-lettered record of either kind, newest first, then the newest `limit`
        open ones: a change the owner may retry is never left off however many newer ones
        wait."""
        records = self._administration.changes(None, (MutationState.DEAD_LETTERED,))
        records += self._administration.changes(limit, tuple(OPEN_STATES))
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


def _entry(record: AnyRecord, aliases: dict[int, str]) -> ChangeEntry:
    if isinstance(record, FolderCreationRecord):
        parent = record.parent_folder_id
        return ChangeEntry(
            record, record.alias, None, None, None if parent is None else aliases.get(parent)
        )
    destination = destination_of(record)
    return ChangeEntry(
        record,
        aliases.get(record.folder_id),
        None if destination is None else aliases.get(destination),
        len(keywords_of(record.value)) if record.kind in KEYWORD_KINDS else None,
    )
