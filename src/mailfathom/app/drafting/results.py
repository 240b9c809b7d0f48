"""What the drafting tools answer: a draft's standing, never its content."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from mailfathom.domain.drafts import CopyState, Draft


@dataclass(frozen=True, slots=True)
class DraftStanding:
    """A draft as save_draft and update_draft answer it. `already_sent` says a repeated save
    found its draft already sent (as `outgoing_id`), so no new draft was claimed."""

    draft_id: uuid.UUID
    account_id: str
    state: CopyState
    revision: int
    recipient_count: int
    saved_at: datetime
    attachment_count: int
    already_sent: bool = False
    outgoing_id: uuid.UUID | None = None


def standing(draft: Draft, *, already_sent: bool = False) -> DraftStanding:
    return DraftStanding(
        draft_id=draft.draft_id,
        account_id=draft.account_id,
        state=draft.copy_state,
        revision=draft.revision,
        recipient_count=len(draft.recipients),
        saved_at=draft.saved_at,
        attachment_count=len(draft.files),
        already_sent=already_sent,
        outgoing_id=draft.outgoing_id if already_sent else None,
    )
