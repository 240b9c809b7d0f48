"""save_draft: hold a new draft here, then file its copy in the owner's drafts folder.

A repeated identical call (same caller, account, shape, answered email, written recipients,
subject and body, see `composition.retry_key`) answers the draft the first call wrote while it
is not given up, and says so when that draft was already sent instead of claiming a new one.

The key is made from the message, so it speaks for the draft only while the draft holds that
message. Once an edit replaced it, a repeat is refused (58001, naming the draft): answering
with the draft would pass off the edited message as the one asked for, or report it sent when
what left was the edit, and writing a second draft would be the duplicate the key is there to
prevent. Deleting the draft frees the key.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, datetime

from mailfathom.app.drafting.composition import DraftComposition, DraftRequest, retry_key
from mailfathom.app.drafting.copies import DraftCopies
from mailfathom.app.drafting.ports import DraftContent, DraftStore, NewDraft
from mailfathom.app.drafting.results import DraftStanding, standing
from mailfathom.app.shared.authorization import Permissions, require
from mailfathom.domain.access import Caller, Permission
from mailfathom.domain.codes import Code
from mailfathom.domain.drafts import DraftLife
from mailfathom.domain.errors import Refusal

PERMISSIONS: Permissions = frozenset({Permission.DRAFTS_WRITE})
# A draft answering a stored email quotes it (a forward carries its files), so the answer
# shape also takes the grant a read takes, as reply_to_email and forward_email do; without
# it the email is answered as one that cannot be answered. A stored part attached takes the
# read grant where it is read (`StoredParts`).
ANSWER_PERMISSIONS: Permissions = PERMISSIONS | {Permission.MAIL_READ}


def _now() -> datetime:
    return datetime.now(UTC)


class DraftSaving:
    def __init__(
        self,
        composition: DraftComposition,
        store: DraftStore,
        copies: DraftCopies,
        clock: Callable[[], datetime] = _now,
    ) -> None:
        self._composition = composition
        self._store = store
        self._copies = copies
        self._clock = clock

    def save(self, caller: Caller, request: DraftRequest) -> DraftStanding:
        require(caller, PERMISSIONS)
        settled = self._composition.settle(caller, request, ANSWER_PERMISSIONS)
        now = self._clock()
        composed = self._composition.compose(settled, now)
        content = DraftContent(
            account_id=settled.account_id,
            answering=settled.answering,
            answered_email_id=settled.answered_email_id,
            message_id=composed.message_id,
            mime=composed.mime,
            body_characters=settled.body_characters,
            recipients=settled.recipients,
            files=settled.files,
            saved_at=now,
        )
        draft, created = self._store.create(
            NewDraft(uuid.uuid4(), caller.label, retry_key(caller, settled), content)
        )
        if not created and draft.edited:
            raise Refusal(
                Code.STATE_ALREADY_PASSED,
                f"This same save_draft call saved draft {draft.draft_id}, which has been edited "
                "since: it is not answered as this call's draft, and no second draft is "
                "written. Edit or send that draft, or delete it to save this message anew.",
            )
        if draft.life is DraftLife.SENT:
            return standing(draft, already_sent=True)
        if not created:
            # Only the call that wrote the draft appends its copy, so identical calls racing
            # each other file one copy; a copy the first call could not append is the
            # account's next pass's.
            return standing(draft)
        return standing(self._copies.file(draft))
