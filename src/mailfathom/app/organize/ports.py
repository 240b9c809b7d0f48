"""The port organizing writes against: the durable record store of the flag changes, asked for
many emails at once."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from mailfathom.app.flags.ports import MutationTarget
from mailfathom.domain.mutations import MutationRecord, RequestedMutation


class OrganizeStore(Protocol):
    def targets(
        self, stored_email_ids: Sequence[uuid.UUID], folder_ids: Sequence[int]
    ) -> dict[uuid.UUID, MutationTarget]:
        """The emails that lie in `folder_ids` with a row naming a message of the folder's
        current UIDVALIDITY; an email answering neither is absent."""
        ...

    def record_each(
        self,
        targets: Sequence[MutationTarget],
        requester: str,
        request_id: str,
        asked: RequestedMutation,
        now: datetime,
    ) -> list[MutationRecord]:
        """One record of `asked` per target, in the order given, all in one commit. A target
        already holding a record of the same kind under this requester and request identity
        is answered with that record as it stands; one holding it with a different value
        raises `RequestIdentityTaken` and nothing is written. A keyword change is shown on
        the local copy in the same commit; a move is shown once it has happened."""
        ...
