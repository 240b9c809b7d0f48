"""The outbox in memory: `OutboxStore`, the delivery pass's lease rules included.

Its lock is the one transaction of its `MemoryStore`: the drafts share it, so a draft's send
and the draft's sent mark are written under one hold, as the SQL outbox writes both in one
transaction.
"""

from __future__ import annotations

import dataclasses
import threading
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Protocol

from mailfathom.app.sending.ports import (
    AttemptResult,
    CeilingLimit,
    CeilingReached,
    ClaimedSend,
    DraftMovedOn,
    NewOutgoing,
    OutboxListing,
    OutboxStore,
    PromotedDraft,
)
from mailfathom.domain.codes import DeliveryCode
from mailfathom.domain.outgoing import OutgoingRecord, Stage


def utc(instant: datetime) -> datetime:
    """An instant as the stores read it back: the same moment, in UTC."""
    return instant.astimezone(UTC)


@dataclass
class _Row:
    seq: int
    new: NewOutgoing
    record: OutgoingRecord
    not_before: datetime
    lease_owner: str | None = None
    lease_expires_at: datetime | None = None
    transmission_started_at: datetime | None = None


class Promotions(Protocol):
    """The drafts a promoting `record` marks sent, asked while the outbox's lock is held."""

    def mark_promoted(self, promoted: PromotedDraft, outgoing_id: uuid.UUID, at: datetime) -> bool:
        """Mark the draft, live at the promoted revision, sent as `outgoing_id` and dismiss
        its alert as of `at`; False otherwise. The caller holds the lock the drafts share."""
        ...


class InMemoryOutbox:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self._rows: list[_Row] = []
        self._drafts: Promotions | None = None

    def hold_drafts(self, drafts: Promotions) -> None:
        """The drafts this outbox marks sent with their sends (they share `lock`)."""
        self._drafts = drafts

    def _mark(self, promoted: PromotedDraft, outgoing_id: uuid.UUID, at: datetime) -> bool:
        return self._drafts is not None and self._drafts.mark_promoted(promoted, outgoing_id, at)

    def record(
        self,
        new: NewOutgoing,
        ceilings: Sequence[CeilingLimit],
        promoting: PromotedDraft | None = None,
    ) -> tuple[OutgoingRecord, bool]:
        with self.lock:
            held = self._by_key(new.account_id, new.idempotency_key)
            if held is not None:
                if promoting is not None:
                    # A send written without its mark is the draft's once it is promoted.
                    self._mark(promoting, held.record.outgoing_id, new.queued_at)
                return held.record, False
            for ceiling in ceilings:
                if self._counted(ceiling, utc(new.queued_at)) >= ceiling.limit:
                    raise CeilingReached(ceiling.name)
            if promoting is not None and not self._mark(promoting, new.outgoing_id, new.queued_at):
                raise DraftMovedOn()
            send_after = None if new.send_after is None else utc(new.send_after)
            not_before = utc(new.not_before)
            record = OutgoingRecord(
                outgoing_id=new.outgoing_id,
                account_id=new.account_id,
                caller=new.caller,
                kind=new.kind,
                stage=Stage.QUEUED,
                attempt_count=0,
                queued_at=utc(new.queued_at),
                recipients=new.recipients,
                send_after=send_after,
            )
            row = _Row(
                seq=len(self._rows) + 1,
                new=new,
                record=record,
                not_before=not_before if send_after is None else max(not_before, send_after),
            )
            self._rows.append(row)
            return record, True

    def _by_key(self, account_id: str, key: str) -> _Row | None:
        return next(
            (
                r
                for r in self._rows
                if r.record.account_id == account_id and r.new.idempotency_key == key
            ),
            None,
        )

    def _counted(self, ceiling: CeilingLimit, now: datetime) -> int:
        since = now - timedelta(seconds=ceiling.window_seconds)
        return sum(
            1
            for r in self._rows
            if r.record.queued_at > since
            and r.record.stage is not Stage.CANCELLED
            and ceiling.account_id in (None, r.record.account_id)
            and ceiling.caller in (None, r.record.caller)
        )

    def _by_id(self, outgoing_id: uuid.UUID) -> _Row | None:
        return next((r for r in self._rows if r.record.outgoing_id == outgoing_id), None)

    def find(self, outgoing_id: uuid.UUID) -> OutgoingRecord | None:
        with self.lock:
            row = self._by_id(outgoing_id)
            return None if row is None else row.record

    def find_key(self, account_id: str, idempotency_key: str) -> OutgoingRecord | None:
        with self.lock:
            row = self._by_key(account_id, idempotency_key)
            return None if row is None else row.record

    def listing(
        self, limit: int | None, stages: Sequence[Stage] | None = None
    ) -> list[OutboxListing]:
        with self.lock:
            rows = [r for r in self._rows if not stages or r.record.stage in stages]
            rows.sort(key=lambda r: (r.record.queued_at, r.seq), reverse=True)
            return [
                OutboxListing(
                    record=r.record,
                    idempotency_key=r.new.idempotency_key,
                    not_before=r.not_before,
                    lease_expires_at=r.lease_expires_at,
                    transmission_started=r.transmission_started_at is not None,
                )
                for r in rows[:limit]
            ]

    def cancel(self, outgoing_id: uuid.UUID, now: datetime) -> OutgoingRecord | None:
        now = utc(now)
        with self.lock:
            row = self._by_id(outgoing_id)
            if row is None:
                return None
            if row.record.stage is Stage.QUEUED and _lapsed(row, now):
                self._change(row, stage=Stage.CANCELLED, finished_at=now)
            return row.record

    def operator_cancel(self, outgoing_id: uuid.UUID, now: datetime) -> OutgoingRecord | None:
        return self.cancel(outgoing_id, now)

    def claim(
        self, worker: str, now: datetime, lease_seconds: float, limit: int
    ) -> list[ClaimedSend]:
        now = utc(now)
        with self.lock:
            due = sorted(
                (r for r in self._rows if _due(r, now) and _lapsed(r, now)),
                key=lambda r: (r.not_before, r.seq),
            )[:limit]
            for row in due:
                row.lease_owner = worker
                row.lease_expires_at = now + timedelta(seconds=lease_seconds)
                row.transmission_started_at = None
                self._change(row, stage=Stage.SENDING, attempt_count=row.record.attempt_count + 1)
            return [
                ClaimedSend(
                    seq=r.seq,
                    outgoing_id=r.record.outgoing_id,
                    account_id=r.record.account_id,
                    attempt_count=r.record.attempt_count,
                    envelope_from=r.new.envelope_from,
                    mime=r.new.mime,
                    recipients=r.record.recipients,
                )
                for r in due
            ]

    def next_due(self) -> datetime | None:
        with self.lock:
            waiting = [r.not_before for r in self._rows if r.record.stage is Stage.QUEUED]
            return min(waiting, default=None)

    def _held(self, seq: int, worker: str) -> _Row | None:
        row = self._rows[seq - 1] if 0 < seq <= len(self._rows) else None
        if row is None or row.record.stage is not Stage.SENDING or row.lease_owner != worker:
            return None
        return row

    def begin_transmission(self, seq: int, worker: str, now: datetime) -> bool:
        now = utc(now)
        with self.lock:
            row = self._held(seq, worker)
            if row is None or row.lease_expires_at is None or row.lease_expires_at <= now:
                return False
            row.transmission_started_at = now
            return True

    def finish(self, seq: int, worker: str, result: AttemptResult, now: datetime) -> bool:
        now = utc(now)
        with self.lock:
            row = self._held(seq, worker)
            if row is None:
                return False
            row.lease_owner = row.lease_expires_at = None
            finished_at = row.record.finished_at
            if result.stage is Stage.QUEUED:
                row.not_before = utc(result.retry_at or now)
                row.transmission_started_at = None
            else:
                finished_at = now
            recipients = (
                tuple(
                    dataclasses.replace(
                        held, state=done.state, last_reply_code=done.last_reply_code
                    )
                    for held, done in zip(row.record.recipients, result.recipients, strict=False)
                )
                + row.record.recipients[len(result.recipients) :]
            )
            self._change(
                row,
                stage=result.stage,
                failure_code=result.failure_code,
                finished_at=finished_at,
                recipients=recipients,
            )
            return True

    def recover(self, now: datetime, retry_at: datetime, max_attempts: int) -> int:
        now = utc(now)
        with self.lock:
            expired = [
                r
                for r in self._rows
                if r.record.stage is Stage.SENDING
                and r.lease_expires_at is not None
                and r.lease_expires_at <= now
            ]
            for row in expired:
                row.lease_owner = row.lease_expires_at = None
                if row.transmission_started_at is not None:
                    failure: DeliveryCode | None = DeliveryCode.OUTCOME_UNKNOWN
                elif row.record.attempt_count >= max_attempts:
                    failure = DeliveryCode.ATTEMPTS_SPENT
                else:
                    failure = None
                if failure is None:
                    row.not_before = utc(retry_at)
                    self._change(row, stage=Stage.QUEUED)
                else:
                    self._change(
                        row, stage=Stage.FAILED, failure_code=int(failure), finished_at=now
                    )
            return len(expired)

    @staticmethod
    def _change(row: _Row, **changes: object) -> None:
        row.record = dataclasses.replace(row.record, **changes)  # type: ignore[arg-type]


def _due(row: _Row, now: datetime) -> bool:
    after = row.record.send_after
    return (
        row.record.stage is Stage.QUEUED
        and row.not_before <= now
        and (after is None or after <= now)
    )


def _lapsed(row: _Row, now: datetime) -> bool:
    """No lease is held on the row, or the one held has expired."""
    return row.lease_expires_at is None or row.lease_expires_at <= now


_: OutboxStore = InMemoryOutbox()
