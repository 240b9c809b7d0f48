"""delete_draft: give up a draft held here and take its copies out of the drafts folder.

The draft is marked given up first, in one conditional statement that dismisses its owner alert
too (a draft given up waits for nobody, whoever gave it up); what the folder still shows
is then answered: every copy out (deleted), one left where nothing here will touch it again
(copyLeftBehind), or the mailbox out of reach, finished by a later pass (pending).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from mailfathom.app.drafting.composition import (
    DraftRevised,
    draft_identifier,
    missed,
    not_held,
)
from mailfathom.app.drafting.copies import DraftCopies
from mailfathom.app.drafting.ports import DraftStore
from mailfathom.app.shared.authorization import Permissions, require
from mailfathom.app.shared.mailbox_selection import ServedAccount
from mailfathom.domain.access import Caller, Permission
from mailfathom.domain.drafts import DeleteOutcome, DraftLife

PERMISSIONS: Permissions = frozenset({Permission.DRAFTS_WRITE})


@dataclass(frozen=True, slots=True)
class DraftDeleted:
    draft_id: uuid.UUID
    outcome: DeleteOutcome


class DraftDeletion:
    def __init__(
        self,
        store: DraftStore,
        copies: DraftCopies,
        served: Sequence[ServedAccount],
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._store = store
        self._copies = copies
        self._served = frozenset(a.account_id for a in served)
        self._clock = clock

    def delete(self, caller: Caller, draft_id: object, revision: int | None = None) -> DraftDeleted:
        """Give the draft up. With `revision`, only that revision (else `DraftRevised`,
        nothing done): the deletion of a person who saw it."""
        require(caller, PERMISSIONS)
        identifier = draft_identifier(draft_id)
        current = self._store.find(identifier)
        if (
            current is None
            or current.life is not DraftLife.LIVE
            or current.account_id not in self._served
        ):
            raise not_held()
        if revision not in (None, current.revision):
            raise DraftRevised
        given_up = self._store.mark_deleted(identifier, self._clock(), revision)
        if given_up is None:
            raise missed(self._store, identifier, revision)
        return DraftDeleted(identifier, self._copies.take_out_all(given_up))
