"""Keeping a message a sending tool composed as a draft, when the person asked to confirm it
chose Save draft, or when nobody could be asked (`DraftSaver` of the confirmation step).

The draft is an ordinary draft of the account: the message composed as it would have been
sent, its recipients (Bcc included, and those an answer reaches marked as derived), the name
and size of each file it carries, and for an answer the email it answers, so `update_draft`
and `send_draft` treat it as any other. The sending call's idempotency key makes the draft's
retry key: asking again keeps one draft. The draft's identifier is derived from that key too,
so the draft a call was kept as is found again whatever became of it (sent, or deleted, which
frees the retry key).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import uuid
from collections.abc import Callable
from datetime import UTC, datetime

from mailfathom.app.confirmation.ports import KeptDraft, KeptLife
from mailfathom.app.drafting.copies import DraftCopies
from mailfathom.app.drafting.ports import DraftContent, DraftStore, NewDraft
from mailfathom.app.sending.confirmable import Outgoing
from mailfathom.app.sending.ports import MessageComposer
from mailfathom.domain.access import Caller
from mailfathom.domain.drafts import DraftFile, DraftLife, DraftRecipient


def _now() -> datetime:
    return datetime.now(UTC)


class SendsKeptAsDrafts:
    def __init__(
        self,
        store: DraftStore,
        copies: DraftCopies,
        composer: MessageComposer,
        clock: Callable[[], datetime] = _now,
    ) -> None:
        self._store = store
        self._copies = copies
        self._composer = composer
        self._clock = clock

    def save(self, caller: Caller, message: Outgoing) -> str:
        now = self._clock()
        composed = self._composer.compose(dataclasses.replace(message.message, sent_at=now))
        content = DraftContent(
            account_id=message.account_id,
            answering=message.answering,
            answered_email_id=message.answered_email_id,
            message_id=composed.message_id,
            mime=composed.mime,
            body_characters=len(message.message.plain_text),
            recipients=tuple(
                DraftRecipient(r.field, r.address, written=r.address.lower() not in message.derived)
                for r in message.recipients
            ),
            saved_at=now,
            files=tuple(
                DraftFile(a.file_name, len(a.content)) for a in message.message.attachments
            ),
        )
        key = _retry_key(caller, message)
        draft, created = self._store.create(NewDraft(_draft_id(key), caller.label, key, content))
        if created:
            self._copies.file(draft)
        return str(draft.draft_id)

    def kept(self, caller: Caller, message: Outgoing) -> KeptDraft | None:
        draft = self._store.find(_draft_id(_retry_key(caller, message)))
        if draft is None or draft.account_id != message.account_id:
            return None
        if draft.life is DraftLife.SENT:
            return KeptDraft(str(draft.draft_id), KeptLife.SENT, draft.outgoing_id)
        if draft.life is DraftLife.DELETED:
            return KeptDraft(str(draft.draft_id), KeptLife.GIVEN_UP)
        return KeptDraft(str(draft.draft_id), KeptLife.HELD)


# Names the draft identifiers derived from a kept send's retry key.
_KEPT_DRAFTS = uuid.UUID("6f1d0c52-3a8e-4b57-9f0e-2d4c8b7a5e13")


def _draft_id(retry_key: str) -> uuid.UUID:
    return uuid.uuid5(_KEPT_DRAFTS, retry_key)


def _retry_key(caller: Caller, message: Outgoing) -> str:
    """A digest of the caller, the account, the kind of send and its idempotency key: the
    same sending call kept twice is one draft, and the key holds nothing of the message."""
    material = ["kept send", caller.label, message.account_id, message.kind.value, message.key]
    encoded = json.dumps(material, ensure_ascii=False, separators=(",", ":")).encode()
    return hashlib.sha256(encoded).hexdigest()
