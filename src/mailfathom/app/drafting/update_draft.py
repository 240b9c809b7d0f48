"""update_draft: replace the whole message of a draft held here, keeping its identifier.

The call states the whole message: what it leaves out is gone. An answer is derived again
from the stored email. The draft must stay with the account that holds it; naming another is
answered as a draft nobody holds. The new copy is appended before the one it replaces is
taken out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from mailfathom.app.drafting.composition import (
    DraftComposition,
    DraftRequest,
    DraftRevised,
    draft_identifier,
    missed,
    not_held,
)
from mailfathom.app.drafting.copies import DraftCopies
from mailfathom.app.drafting.ports import DraftContent, DraftStore
from mailfathom.app.drafting.results import DraftStanding, standing
from mailfathom.app.shared.authorization import Permissions, require
from mailfathom.app.shared.mailbox_selection import ServedAccount
from mailfathom.domain.access import Caller, Permission
from mailfathom.domain.drafts import DraftLife

PERMISSIONS: Permissions = frozenset({Permission.DRAFTS_WRITE})
# A draft answering a stored email quotes it (a forward carries its files), so the answer
# shape also takes the grant a read takes, as reply_to_email and forward_email do; without
# it the email is answered as one that cannot be answered. A stored part attached takes the
# read grant where it is read (`StoredParts`).
ANSWER_PERMISSIONS: Permissions = PERMISSIONS | {Permission.MAIL_READ}


def _now() -> datetime:
    return datetime.now(UTC)


class DraftEditing:
    def __init__(
        self,
        composition: DraftComposition,
        store: DraftStore,
        copies: DraftCopies,
        served: Sequence[ServedAccount],
        clock: Callable[[], datetime] = _now,
    ) -> None:
        self._composition = composition
        self._store = store
        self._copies = copies
        self._served = frozenset(a.account_id for a in served)
        self._clock = clock

    def update(
        self,
        caller: Caller,
        draft_id: object,
        request: DraftRequest,
        revision: int | None = None,
    ) -> DraftStanding:
        """Save `request` as the draft's next revision. With `revision`, only over that
        revision (else `DraftRevised`, nothing saved): the edit of a person who saw it."""
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
        settled = self._composition.settle(caller, request, ANSWER_PERMISSIONS)
        if settled.account_id != current.account_id:
            raise not_held()
        now = self._clock()
        composed = self._composition.compose(settled, now, message_id=current.message_id)
        revised = self._store.revise(
            identifier,
            DraftContent(
                account_id=settled.account_id,
                answering=settled.answering,
                answered_email_id=settled.answered_email_id,
                message_id=composed.message_id,
                mime=composed.mime,
                body_characters=settled.body_characters,
                recipients=settled.recipients,
                files=settled.files,
                saved_at=now,
            ),
            revision,
        )
        if revised is None:
            raise missed(self._store, identifier, revision)
        return standing(self._copies.file(revised))
