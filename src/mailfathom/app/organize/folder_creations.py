"""Carrying folder creation records to the owner's mailbox, inside a synchronization run.

A record names the folder (and its parent, a folder of the account). The run builds the
server name from the parent's name and the server's hierarchy delimiter, notes it on the
record, then issues CREATE and SUBSCRIBE; once the folder exists its row is published under
the record's alias and the record completes. A name already on the server is never taken
over (it may be a folder the deployment withholds or does not map), nor told of: telling the
caller would say that a folder it may not see exists. The folder is created under the first
free name of `name 2` to `name 10` instead, published under the alias asked for all the same;
the record is dead-lettered only when all ten are taken. The name this record noted before an
attempt that was cut off after its CREATE is known to be its own folder. Creations run
before the flag changes and moves of the same run, so a move into the new folder asked
together with it is carried in the same run.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import structlog

from mailfathom.app.organize.ports import CreationLedger, FolderRefused, FolderWriter, OpenCreation
from mailfathom.domain.errors import SyncError
from mailfathom.domain.mutations import MAX_ATTEMPTS, MutationFailure, MutationState

log = structlog.get_logger("mailfathom.organize")

# How many server names a creation tries: its name, then `name 2` up to this.
NUMBERED_NAMES = 10


class FolderCreationConvergence:
    def __init__(
        self, ledger: CreationLedger, clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    ) -> None:
        self._ledger = ledger
        self._clock = clock

    def pending(self, account_id: str) -> int:
        return self._ledger.open_count(account_id)

    def converge(self, account_id: str, writer: FolderWriter) -> int:
        """Carry the account's open creation records; answers how many were created."""
        created = 0
        for record in self._ledger.open_creations(account_id):
            if record.parent_gone:
                self._end(record, MutationFailure.FOLDER_GONE)
                continue
            try:
                created += self._create(writer, record)
            except SyncError:
                log.warning("organize.folder_not_created", account=account_id)
                if record.attempts + 1 >= MAX_ATTEMPTS:
                    self._end(record, MutationFailure.ATTEMPTS_SPENT)
        return created

    def _create(self, writer: FolderWriter, record: OpenCreation) -> int:
        delimiter = writer.delimiter()
        if (delimiter and delimiter in record.name) or (
            record.parent_remote is not None and not delimiter
        ):
            # The name would name a level of its own, or the server keeps no levels.
            self._end(record, MutationFailure.FOLDER_NAME_REFUSED)
            return 0
        noted = record.noted_remote_name
        if noted is not None and writer.exists(noted):
            remote = noted
        else:
            free = _free_name(writer, record, delimiter)
            if free is None:
                self._end(record, MutationFailure.FOLDER_EXISTS)
                return 0
            remote = free
            self._ledger.begin(record.creation_id, remote, self._clock())
            try:
                writer.create(remote)
            except FolderRefused:
                self._end(record, MutationFailure.FOLDER_NAME_REFUSED)
                return 0
        self._ledger.created(record.creation_id, remote, self._clock())
        log.info("organize.folder_created", creation_id=str(record.creation_id))
        return 1

    def _end(self, record: OpenCreation, failure: MutationFailure) -> None:
        self._ledger.settle(
            record.creation_id, MutationState.DEAD_LETTERED, int(failure), self._clock()
        )


def _free_name(writer: FolderWriter, record: OpenCreation, delimiter: str | None) -> str | None:
    """The first server name of the record's folder not on the server: its name, then its
    numbered names; None when every one is taken."""
    for number in range(1, NUMBERED_NAMES + 1):
        leaf = record.name if number == 1 else f"{record.name} {number}"
        if number > 1 and delimiter and delimiter in leaf:
            return None
        remote = (
            leaf if record.parent_remote is None else f"{record.parent_remote}{delimiter}{leaf}"
        )
        if not writer.exists(remote):
            return remote
    return None
