"""Drafts in memory: `DraftStore`, with the outbox it reads delivered sends from and that
marks a draft sent in the same hold of the shared lock as it writes the draft's send. The
note of an APPEND sent and not answered is the draft's `pending_append`, as the SQL store
reads it back from the draft's row."""

from __future__ import annotations

import dataclasses
import threading
import uuid
from datetime import datetime

from fakes.outbox import InMemoryOutbox, utc
from mailfathom.app.confirmation.confirmed_sending import alert_key
from mailfathom.app.confirmation.ports import OwnerAlerts
from mailfathom.app.drafting.ports import CopyWork, DraftContent, DraftStore, NewDraft
from mailfathom.app.sending.ports import PromotedDraft
from mailfathom.domain.drafts import (
    FIRST_REVISION,
    CopyPlace,
    Draft,
    DraftCopy,
    DraftLife,
    PendingAppend,
)
from mailfathom.domain.outgoing import Stage


@dataclasses.dataclass
class _Row:
    draft: Draft
    retry_key: str | None
    filing_until: datetime | None = None


class InMemoryDraftStore:
    def __init__(self, outbox: InMemoryOutbox) -> None:
        """`outbox` says which sends were delivered (a sent draft's copy is taken out only
        once its message has left), and it alone marks a draft sent, with its send: the
        drafts hold its lock, as the tables of one database share its transactions."""
        self._lock: threading.Lock = outbox.lock
        self._rows: list[_Row] = []
        self._outbox = outbox
        self._alerts: OwnerAlerts | None = None
        outbox.hold_drafts(self)

    def hold_alerts(self, alerts: OwnerAlerts) -> None:
        """The alerts this store dismisses with a draft given up or sent, as the SQL store
        does in the same transaction."""
        self._alerts = alerts

    def _dismiss(self, draft_id: uuid.UUID, at: datetime) -> None:
        if self._alerts is not None:
            self._alerts.dismiss(alert_key(str(draft_id)), at)

    def row_count(self) -> int:
        """How many drafts are held, whatever their life, as the SQL store counts its table."""
        with self._lock:
            return len(self._rows)

    def create(self, new: NewDraft) -> tuple[Draft, bool]:
        with self._lock:
            held = next((r for r in self._rows if r.retry_key == new.retry_key), None)
            if held is not None:
                return held.draft, False
            draft = _revised(
                Draft(
                    draft_id=new.draft_id,
                    account_id=new.content.account_id,
                    caller=new.caller,
                    answering=None,
                    answered_email_id=None,
                    revision=FIRST_REVISION,
                    message_id="",
                    mime=b"",
                    body_characters=0,
                    recipients=(),
                    saved_at=new.content.saved_at,
                    life=DraftLife.LIVE,
                ),
                new.content,
                revision=FIRST_REVISION,
            )
            self._rows.append(_Row(draft, new.retry_key))
            return draft, True

    def _row(self, draft_id: uuid.UUID) -> _Row | None:
        return next((r for r in self._rows if r.draft.draft_id == draft_id), None)

    def find(self, draft_id: uuid.UUID) -> Draft | None:
        with self._lock:
            row = self._row(draft_id)
            return None if row is None else row.draft

    def find_sent(self, outgoing_id: uuid.UUID) -> Draft | None:
        with self._lock:
            return next((r.draft for r in self._rows if r.draft.outgoing_id == outgoing_id), None)

    def revise(
        self, draft_id: uuid.UUID, content: DraftContent, revision: int | None = None
    ) -> Draft | None:
        with self._lock:
            row = self._live(draft_id, revision)
            if row is None or row.draft.account_id != content.account_id:
                return None
            row.draft = _revised(row.draft, content, revision=row.draft.revision + 1)
            return row.draft

    def _live(self, draft_id: uuid.UUID, revision: int | None = None) -> _Row | None:
        row = self._row(draft_id)
        if row is None or row.draft.life is not DraftLife.LIVE:
            return None
        return row if revision in (None, row.draft.revision) else None

    def mark_deleted(
        self, draft_id: uuid.UUID, at: datetime, revision: int | None = None
    ) -> Draft | None:
        with self._lock:
            row = self._live(draft_id, revision)
            if row is None:
                return None
            row.retry_key = None
            row.draft = dataclasses.replace(row.draft, life=DraftLife.DELETED)
            self._dismiss(draft_id, at)
            return row.draft

    def mark_promoted(self, promoted: PromotedDraft, outgoing_id: uuid.UUID, at: datetime) -> bool:
        """The outbox's half of a promotion, called with the shared lock held."""
        row = self._live(promoted.draft_id)
        if row is None or row.draft.revision != promoted.revision:
            return False
        row.draft = dataclasses.replace(row.draft, life=DraftLife.SENT, outgoing_id=outgoing_id)
        self._dismiss(promoted.draft_id, at)
        return True

    def claim_filing(self, draft_id: uuid.UUID, now: datetime, until: datetime) -> bool:
        with self._lock:
            row = self._row(draft_id)
            if row is None or (row.filing_until is not None and row.filing_until > utc(now)):
                return False
            row.filing_until = utc(until)
            return True

    def release_filing(self, draft_id: uuid.UUID) -> None:
        with self._lock:
            row = self._row(draft_id)
            if row is not None:
                row.filing_until = None

    def record_copy(self, draft_id: uuid.UUID, revision: int, place: CopyPlace) -> None:
        with self._lock:
            row = self._row(draft_id)
            if row is not None:
                _put_copy(row, revision, place)

    def note_append(self, draft_id: uuid.UUID, pending: PendingAppend) -> None:
        with self._lock:
            row = self._row(draft_id)
            if row is not None:
                row.draft = dataclasses.replace(row.draft, pending_append=pending)

    def settle_append(self, draft_id: uuid.UUID, revision: int, place: CopyPlace | None) -> None:
        with self._lock:
            row = self._row(draft_id)
            if row is None:
                return
            if place is not None:
                _put_copy(row, revision, place)
            pending = row.draft.pending_append
            if pending is not None and pending.revision == revision:
                row.draft = dataclasses.replace(row.draft, pending_append=None)

    def forget_copy(self, draft_id: uuid.UUID, revision: int) -> None:
        with self._lock:
            row = self._row(draft_id)
            if row is not None:
                copies = tuple(c for c in row.draft.copies if c.revision != revision)
                row.draft = dataclasses.replace(row.draft, copies=copies)

    def copy_work(self, account_id: str) -> CopyWork:
        with self._lock:
            drafts = [r.draft for r in self._rows if r.draft.account_id == account_id]
        to_file = tuple(
            d
            for d in drafts
            if d.life is DraftLife.LIVE and all(c.revision != d.revision for c in d.copies)
        )
        to_remove = tuple(
            (d.draft_id, c.revision, c.place)
            for d in drafts
            for c in d.copies
            if c.revision != d.revision
            or d.life is DraftLife.DELETED
            or (d.life is DraftLife.SENT and self._delivered(d))
        )
        to_settle = tuple(d for d in drafts if d.pending_append is not None)
        return CopyWork(to_file, to_remove, to_settle)

    def _delivered(self, draft: Draft) -> bool:
        sent = None if draft.outgoing_id is None else self._outbox.find(draft.outgoing_id)
        return sent is not None and sent.stage is Stage.SENT


def _put_copy(row: _Row, revision: int, place: CopyPlace) -> None:
    others = [c for c in row.draft.copies if c.revision != revision]
    copies = sorted([*others, DraftCopy(revision, place)], key=lambda c: c.revision)
    row.draft = dataclasses.replace(row.draft, copies=tuple(copies))


def _revised(draft: Draft, content: DraftContent, *, revision: int) -> Draft:
    return dataclasses.replace(
        draft,
        account_id=content.account_id,
        answering=content.answering,
        answered_email_id=content.answered_email_id,
        revision=revision,
        message_id=content.message_id,
        mime=content.mime,
        body_characters=content.body_characters,
        recipients=content.recipients,
        saved_at=utc(content.saved_at),
        files=content.files,
    )


_: DraftStore = InMemoryDraftStore(InMemoryOutbox())
