"""The outbox on SQLite and PostgreSQL: `OutboxStore`.

Every change of stage is one conditional UPDATE whose WHERE clause states the facts the change
depends on (the stage, the lease, who holds it), and whoever's statement changed no row lost
the race. That is what keeps a claim and a cancellation from both succeeding, and a worker
that lost its lease from writing over what happened since. Lease times are set and compared
on the store's clock (`now`), so workers whose machines' clocks disagree agree on expiry. A
claim names the claiming process (`adapters.processes`): a send claimed by a process of this
machine that is provably gone is recovered at once, as if its lease had expired.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa

from mailfathom.adapters.processes import MachineProcesses
from mailfathom.adapters.sql.drafts import mark_promoted
from mailfathom.adapters.sql.schema import outgoing_emails, outgoing_recipients
from mailfathom.adapters.sql.store_clock import store_now
from mailfathom.app.sending.ports import (
    AttemptResult,
    CeilingLimit,
    CeilingReached,
    ClaimedSend,
    DraftMovedOn,
    NewOutgoing,
    OutboxListing,
    PromotedDraft,
)
from mailfathom.domain.codes import DeliveryCode
from mailfathom.domain.outgoing import (
    AddressField,
    OutgoingKind,
    OutgoingRecord,
    Recipient,
    RecipientState,
    Stage,
)

_O = outgoing_emails.c
_R = outgoing_recipients.c
# Serializes the writing of sends on PostgreSQL, so that the ceilings counted before a write
# still hold when it commits (SQLite's writers are serialized by BEGIN IMMEDIATE already).
_OUTBOX_LOCK = 0x6D66_6F62


class SqlOutbox:
    def __init__(
        self,
        engine: sa.Engine,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        *,
        machine: MachineProcesses | None = None,
        process: str | None = None,
    ) -> None:
        """`clock`: this machine's, read by `now` on SQLite only. `machine`: this machine's
        processes, so that `recover` takes back at once a send claimed by one of them that is
        gone (None: by lease expiry alone); `process`: how the claim names the claiming
        process (by default this one)."""
        self._engine = engine
        self._clock = clock
        self._machine = machine
        self._process = process if process is not None or machine is None else machine.own()

    def now(self) -> datetime:
        """The clock every delivery worker sharing the store reads (`store_now`)."""
        return store_now(self._engine, self._clock)

    # -- writing a send ------------------------------------------------------------------

    def record(
        self,
        new: NewOutgoing,
        ceilings: Sequence[CeilingLimit],
        promoting: PromotedDraft | None = None,
    ) -> tuple[OutgoingRecord, bool]:
        try:
            with self._engine.begin() as c:
                if c.dialect.name == "postgresql":
                    c.execute(sa.select(sa.func.pg_advisory_xact_lock(_OUTBOX_LOCK)))
                existing = self._seq_of(c, new.account_id, new.idempotency_key)
                if existing is not None:
                    standing = self._load(c, existing)
                    if promoting is not None:
                        # A draft whose send was written without the mark (by a process that
                        # stopped in between, before both were one transaction) is marked now.
                        mark_promoted(c, promoting, standing.outgoing_id, new.queued_at)
                    return standing, False
                for ceiling in ceilings:
                    if self._counted(c, ceiling, new.queued_at) >= ceiling.limit:
                        raise CeilingReached(ceiling.name)
                seq = c.execute(
                    sa.insert(outgoing_emails).returning(_O.seq),
                    {
                        "outgoing_id": new.outgoing_id,
                        "account_id": new.account_id,
                        "idempotency_key": new.idempotency_key,
                        "caller": new.caller,
                        "kind": new.kind.value,
                        "stage": Stage.QUEUED.value,
                        "queued_at": new.queued_at,
                        "not_before": _not_before(new),
                        "attempt_count": 0,
                        "message_id_header": new.message_id,
                        "envelope_from": new.envelope_from,
                        "mime": new.mime,
                        "send_after": new.send_after,
                    },
                ).scalar_one()
                c.execute(
                    sa.insert(outgoing_recipients),
                    [
                        {
                            "account_id": new.account_id,
                            "outgoing_seq": seq,
                            "position": position,
                            "field": r.field.value,
                            "address": r.address,
                            "state": r.state.value,
                        }
                        for position, r in enumerate(new.recipients)
                    ],
                )
                if promoting is not None and not mark_promoted(
                    c, promoting, new.outgoing_id, new.queued_at
                ):
                    raise DraftMovedOn()
                return self._load(c, int(seq)), True
        except sa.exc.IntegrityError:
            # Another call wrote the same account and key first; its record is the answer.
            with self._engine.connect() as c:
                found = self._seq_of(c, new.account_id, new.idempotency_key)
                if found is None:
                    raise
                return self._load(c, found), False

    @staticmethod
    def _seq_of(c: sa.Connection, account_id: str, key: str) -> int | None:
        found = c.execute(
            sa.select(_O.seq).where(_O.account_id == account_id, _O.idempotency_key == key)
        ).scalar_one_or_none()
        return None if found is None else int(found)

    @staticmethod
    def _counted(c: sa.Connection, ceiling: CeilingLimit, now: datetime) -> int:
        since = now - timedelta(seconds=ceiling.window_seconds)
        query = (
            sa.select(sa.func.count())
            .select_from(outgoing_emails)
            .where(_O.queued_at > since, _O.stage != Stage.CANCELLED.value)
        )
        if ceiling.account_id is not None:
            query = query.where(_O.account_id == ceiling.account_id)
        if ceiling.caller is not None:
            query = query.where(_O.caller == ceiling.caller)
        return int(c.execute(query).scalar_one())

    # -- reading -------------------------------------------------------------------------

    def find(self, outgoing_id: uuid.UUID) -> OutgoingRecord | None:
        with self._engine.connect() as c:
            seq = c.execute(
                sa.select(_O.seq).where(_O.outgoing_id == outgoing_id)
            ).scalar_one_or_none()
            return None if seq is None else self._load(c, int(seq))

    def find_key(self, account_id: str, idempotency_key: str) -> OutgoingRecord | None:
        """The send an account holds under an idempotency key (for an operator)."""
        with self._engine.connect() as c:
            seq = self._seq_of(c, account_id, idempotency_key)
            return None if seq is None else self._load(c, seq)

    @staticmethod
    def _recipients(c: sa.Connection, account_id: str, seq: int) -> tuple[Recipient, ...]:
        rows = c.execute(
            sa.select(_R.field, _R.address, _R.state, _R.last_reply_code)
            .where(_R.account_id == account_id, _R.outgoing_seq == seq)
            .order_by(_R.position)
        )
        return tuple(
            Recipient(AddressField(f), address, RecipientState(state), code)
            for f, address, state, code in rows
        )

    def _load(self, c: sa.Connection, seq: int) -> OutgoingRecord:
        row = c.execute(sa.select(outgoing_emails).where(_O.seq == seq)).one()
        return _record(row, self._recipients(c, row.account_id, seq))

    def listing(
        self, limit: int | None, stages: Sequence[Stage] | None = None
    ) -> list[OutboxListing]:
        query = sa.select(outgoing_emails).order_by(_O.queued_at.desc(), _O.seq.desc())
        if stages:
            query = query.where(_O.stage.in_([s.value for s in stages]))
        with self._engine.connect() as c:
            rows = c.execute(query.limit(limit)).all()
            return [
                OutboxListing(
                    record=_record(r, self._recipients(c, r.account_id, int(r.seq))),
                    idempotency_key=r.idempotency_key,
                    not_before=r.not_before,
                    lease_expires_at=r.lease_expires_at,
                    transmission_started=r.transmission_started_at is not None,
                )
                for r in rows
            ]

    # -- withdrawing ---------------------------------------------------------------------

    def cancel(self, outgoing_id: uuid.UUID, now: datetime) -> OutgoingRecord | None:
        with self._engine.begin() as c:
            c.execute(
                sa.update(outgoing_emails)
                .where(
                    _O.outgoing_id == outgoing_id,
                    _O.stage == Stage.QUEUED.value,
                    sa.or_(_O.lease_expires_at.is_(None), _O.lease_expires_at <= now),
                )
                .values(stage=Stage.CANCELLED.value, finished_at=now)
            )
            seq = c.execute(
                sa.select(_O.seq).where(_O.outgoing_id == outgoing_id)
            ).scalar_one_or_none()
            return None if seq is None else self._load(c, int(seq))

    def operator_cancel(self, outgoing_id: uuid.UUID, now: datetime) -> OutgoingRecord | None:
        return self.cancel(outgoing_id, now)

    # -- the delivery pass ---------------------------------------------------------------

    def claim(
        self, worker: str, now: datetime, lease_seconds: float, limit: int
    ) -> list[ClaimedSend]:
        with self._engine.connect() as c:
            due = list(
                c.execute(
                    sa.select(_O.seq)
                    .where(_O.stage == Stage.QUEUED.value, _O.not_before <= now, _after(now))
                    .order_by(_O.not_before, _O.seq)
                    .limit(limit)
                ).scalars()
            )
        claimed: list[ClaimedSend] = []
        expires = now + timedelta(seconds=lease_seconds)
        for seq in due:
            with self._engine.begin() as c:
                taken = c.execute(
                    sa.update(outgoing_emails)
                    .where(
                        _O.seq == seq,
                        _O.stage == Stage.QUEUED.value,
                        _O.not_before <= now,
                        _after(now),
                        sa.or_(_O.lease_expires_at.is_(None), _O.lease_expires_at <= now),
                    )
                    .values(
                        stage=Stage.SENDING.value,
                        lease_owner=worker,
                        lease_process=self._process,
                        lease_expires_at=expires,
                        attempt_count=_O.attempt_count + 1,
                        transmission_started_at=None,
                    )
                ).rowcount
                if taken != 1:
                    continue
                row = c.execute(
                    sa.select(
                        _O.outgoing_id, _O.account_id, _O.attempt_count, _O.envelope_from, _O.mime
                    ).where(_O.seq == seq)
                ).one()
                claimed.append(
                    ClaimedSend(
                        seq=int(seq),
                        outgoing_id=row.outgoing_id,
                        account_id=row.account_id,
                        attempt_count=int(row.attempt_count),
                        envelope_from=row.envelope_from,
                        mime=bytes(row.mime),
                        recipients=self._recipients(c, row.account_id, int(seq)),
                    )
                )
        return claimed

    def next_due(self) -> datetime | None:
        with self._engine.connect() as c:
            due: datetime | None = c.execute(
                sa.select(sa.func.min(_O.not_before)).where(_O.stage == Stage.QUEUED.value)
            ).scalar_one()
        return due

    @staticmethod
    def _held(seq: int, worker: str) -> list[sa.ColumnElement[bool]]:
        return [_O.seq == seq, _O.stage == Stage.SENDING.value, _O.lease_owner == worker]

    def begin_transmission(self, seq: int, worker: str, now: datetime) -> bool:
        with self._engine.begin() as c:
            changed = c.execute(
                sa.update(outgoing_emails)
                .where(*self._held(seq, worker), _O.lease_expires_at > now)
                .values(transmission_started_at=now)
            ).rowcount
        return changed == 1

    def finish(self, seq: int, worker: str, result: AttemptResult, now: datetime) -> bool:
        values: dict[str, Any] = {
            "stage": result.stage.value,
            "failure_code": result.failure_code,
            "lease_owner": None,
            "lease_process": None,
            "lease_expires_at": None,
        }
        if result.stage is Stage.QUEUED:
            values["not_before"] = result.retry_at or now
            values["transmission_started_at"] = None
            if not result.counted:
                values["attempt_count"] = _O.attempt_count - 1
        else:
            values["finished_at"] = now
        with self._engine.begin() as c:
            account_id = c.execute(
                sa.update(outgoing_emails)
                .where(*self._held(seq, worker))
                .values(**values)
                .returning(_O.account_id)
            ).scalar_one_or_none()
            if account_id is None:
                return False
            for position, recipient in enumerate(result.recipients):
                c.execute(
                    sa.update(outgoing_recipients)
                    .where(
                        _R.account_id == account_id,
                        _R.outgoing_seq == seq,
                        _R.position == position,
                    )
                    .values(state=recipient.state.value, last_reply_code=recipient.last_reply_code)
                )
        return True

    def recover(self, now: datetime, retry_at: datetime, max_attempts: int) -> int:
        """A send claimed by a process of this machine that is gone counts as expired."""
        released = {"lease_owner": None, "lease_process": None, "lease_expires_at": None}
        with self._engine.begin() as c:
            ended = _O.lease_expires_at <= now
            if self._machine is not None:
                held = sa.select(_O.lease_process).where(
                    _O.stage == Stage.SENDING.value, _O.lease_expires_at > now
                )
                gone = self._machine.gone_among(c.execute(held.distinct()).scalars())
                if gone:
                    ended = sa.or_(ended, _O.lease_process.in_(gone))
            expired = [_O.stage == Stage.SENDING.value, ended]
            unknown = c.execute(
                sa.update(outgoing_emails)
                .where(*expired, _O.transmission_started_at.is_not(None))
                .values(
                    stage=Stage.FAILED.value,
                    failure_code=int(DeliveryCode.OUTCOME_UNKNOWN),
                    finished_at=now,
                    **released,
                )
            ).rowcount
            spent = c.execute(
                sa.update(outgoing_emails)
                .where(
                    *expired,
                    _O.transmission_started_at.is_(None),
                    _O.attempt_count >= max_attempts,
                )
                .values(
                    stage=Stage.FAILED.value,
                    failure_code=int(DeliveryCode.ATTEMPTS_SPENT),
                    finished_at=now,
                    **released,
                )
            ).rowcount
            again = c.execute(
                sa.update(outgoing_emails)
                .where(*expired, _O.transmission_started_at.is_(None))
                .values(stage=Stage.QUEUED.value, not_before=retry_at, **released)
            ).rowcount
        return int(unknown + spent + again)


def _record(row: Any, recipients: tuple[Recipient, ...]) -> OutgoingRecord:
    return OutgoingRecord(
        outgoing_id=row.outgoing_id,
        account_id=row.account_id,
        caller=row.caller,
        kind=OutgoingKind(row.kind),
        stage=Stage(row.stage),
        attempt_count=int(row.attempt_count),
        queued_at=row.queued_at,
        recipients=recipients,
        failure_code=row.failure_code,
        finished_at=row.finished_at,
        send_after=row.send_after,
    )


def _not_before(new: NewOutgoing) -> datetime:
    """A send asked to wait is not due before its instant, whatever hold it was written with,
    so the claim finds it through `ix_outgoing_due` alone."""
    if new.send_after is None:
        return new.not_before
    return max(new.not_before, new.send_after)


def _after(now: datetime) -> sa.ColumnElement[bool]:
    """The send's own instant has come. `not_before` already says so for every record this
    adapter wrote; the claim states it anyway, as the fact the change depends on."""
    return sa.or_(_O.send_after.is_(None), _O.send_after <= now)
