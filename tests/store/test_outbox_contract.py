"""What the sending use cases and the delivery pass rely on from the outbox, on SQLite,
PostgreSQL and the in-memory fake alike: one record per account and key under racing calls,
ceilings counted in the same transaction as the write, and stage changes that cannot both
win."""

from __future__ import annotations

import dataclasses
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
import sqlalchemy as sa

from mailfathom.adapters.sql.outbox import SqlOutbox
from mailfathom.adapters.sql.schema import outgoing_emails
from mailfathom.app.sending.ports import (
    AttemptResult,
    CeilingLimit,
    CeilingReached,
    NewOutgoing,
    OutboxStore,
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
from store.conftest import Backend
from store.overlapping_writes import interleaved, overlapped

_WRITING_A_SEND = f"^INSERT INTO {outgoing_emails.name} "
_TAKING_A_SEND = f"^UPDATE {outgoing_emails.name} SET stage="
# The claim's first transaction, which reads the sends due; it takes them in later ones.
_READING_THE_DUE = rf"ORDER BY {outgoing_emails.name}\.not_before"

T0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def outbox(backend: Backend) -> OutboxStore:
    return backend.outbox()


def _new(
    key: str = "k1", *, account: str = "acct", caller: str = "agent", at: datetime = T0
) -> NewOutgoing:
    return NewOutgoing(
        outgoing_id=uuid.uuid4(),
        account_id=account,
        idempotency_key=key,
        caller=caller,
        kind=OutgoingKind.NEW,
        queued_at=at,
        not_before=at,
        message_id="<m@example.org>",
        envelope_from="me@example.org",
        mime=b"Subject: x\r\n\r\nbody\r\n",
        recipients=(
            Recipient(AddressField.TO, "a@example.net"),
            Recipient(AddressField.BCC, "b@example.net"),
        ),
    )


def test_a_send_is_written_with_its_recipients_and_read_back(outbox: OutboxStore) -> None:
    record, created = outbox.record(_new(), [])
    assert created
    assert record.stage is Stage.QUEUED
    assert record.queued_at == T0
    assert record.attempt_count == 0
    assert [(r.field, r.address, r.state) for r in record.recipients] == [
        (AddressField.TO, "a@example.net", RecipientState.PENDING),
        (AddressField.BCC, "b@example.net", RecipientState.PENDING),
    ]
    assert outbox.find(record.outgoing_id) == record
    assert outbox.find(uuid.uuid4()) is None


def test_the_same_key_answers_the_first_record_and_another_account_may_reuse_it(
    outbox: OutboxStore,
) -> None:
    first, _ = outbox.record(_new(), [])
    again, created = outbox.record(_new(at=T0 + timedelta(minutes=5)), [])
    assert not created
    assert again == first
    other, created = outbox.record(_new(account="other"), [])
    assert created
    assert other.outgoing_id != first.outgoing_id


def test_two_calls_with_one_key_at_once_leave_one_record(engine: sa.Engine) -> None:
    """The second call comes while the first has written its send but not committed: it
    waits for the first (or meets the key's unique constraint) and answers its record."""
    outbox = SqlOutbox(engine)
    first, second = overlapped(
        engine,
        lambda: outbox.record(_new("race"), []),
        lambda: outbox.record(_new("race"), []),
        at=_WRITING_A_SEND,
    )
    assert isinstance(first, tuple)
    assert isinstance(second, tuple)
    assert (first[1], second[1]) == (True, False)
    assert second[0] == first[0]
    assert [entry.record.outgoing_id for entry in outbox.listing(100)] == [first[0].outgoing_id]


def _hourly(account: str) -> CeilingLimit:
    return CeilingLimit("the account's hourly ceiling", 2, 3600, account_id=account)


def test_a_ceiling_is_counted_before_the_write_and_a_repeat_is_not_counted(
    outbox: OutboxStore,
) -> None:
    outbox.record(_new("a"), [_hourly("acct")])
    outbox.record(_new("b", at=T0 + timedelta(minutes=1)), [_hourly("acct")])
    with pytest.raises(CeilingReached) as reached:
        outbox.record(_new("c", at=T0 + timedelta(minutes=2)), [_hourly("acct")])
    assert reached.value.name == "the account's hourly ceiling"
    assert [entry.idempotency_key for entry in outbox.listing(10)] == ["b", "a"]
    # A repeated call is answered without counting; another account has room of its own.
    assert not outbox.record(_new("a", at=T0 + timedelta(minutes=3)), [_hourly("acct")])[1]
    other = _new("c", account="other", at=T0 + timedelta(minutes=2))
    assert outbox.record(other, [_hourly("other")])[1]
    # Once the first send is an hour old, there is room again.
    assert outbox.record(_new("c", at=T0 + timedelta(minutes=60, seconds=1)), [_hourly("acct")])[1]


def test_a_cancelled_send_is_not_counted_and_a_caller_ceiling_counts_that_caller(
    outbox: OutboxStore,
) -> None:
    def per_caller(name: str) -> list[CeilingLimit]:
        return [CeilingLimit("this client's hourly ceiling", 1, 3600, caller=name)]

    first = outbox.record(_new("a"), per_caller("agent"))[0]
    with pytest.raises(CeilingReached):
        outbox.record(_new("b", account="other"), per_caller("agent"))
    assert outbox.record(_new("b", caller="someone-else"), per_caller("someone-else"))[1]
    outbox.cancel(first.outgoing_id, T0)
    assert outbox.record(_new("c", account="other"), per_caller("agent"))[1]


def test_racing_sends_never_pass_a_ceiling(outbox: OutboxStore) -> None:
    ceiling = CeilingLimit("the installation's hourly ceiling", 5, 3600)
    start = threading.Barrier(12)

    def call(i: int) -> bool:
        start.wait(timeout=30)
        try:
            return outbox.record(_new(f"k{i}"), [ceiling])[1]
        except CeilingReached:
            return False

    with ThreadPoolExecutor(12) as pool:
        written = sum(pool.map(call, range(12)))
    assert written == 5


def _claim_one(outbox: OutboxStore, worker: str = "w1", at: datetime = T0) -> Any:
    (claimed,) = outbox.claim(worker, at, 60, 10)
    return claimed


def test_a_claim_takes_a_due_send_under_a_lease_and_counts_the_attempt(
    outbox: OutboxStore,
) -> None:
    later = outbox.record(_new("later", at=T0 + timedelta(hours=1)), [])[0]
    record = outbox.record(_new(), [])[0]
    claimed = _claim_one(outbox)
    assert claimed.outgoing_id == record.outgoing_id
    assert claimed.attempt_count == 1
    assert claimed.mime == b"Subject: x\r\n\r\nbody\r\n"
    assert outbox.claim("w2", T0, 60, 10) == []
    found = outbox.find(record.outgoing_id)
    assert found is not None
    assert found.stage is Stage.SENDING
    assert outbox.find(later.outgoing_id).stage is Stage.QUEUED  # type: ignore[union-attr]


def test_cancel_withdraws_only_a_waiting_send(outbox: OutboxStore) -> None:
    waiting = outbox.record(_new("w"), [])[0]
    after = outbox.cancel(waiting.outgoing_id, T0)
    assert after is not None
    assert after.stage is Stage.CANCELLED
    # Withdrawn twice: the same answer, nothing written again.
    assert outbox.cancel(waiting.outgoing_id, T0 + timedelta(minutes=1)) == after
    taken = outbox.record(_new("t"), [])[0]
    _claim_one(outbox)
    assert outbox.cancel(taken.outgoing_id, T0).stage is Stage.SENDING  # type: ignore[union-attr]
    assert outbox.cancel(uuid.uuid4(), T0) is None
    assert outbox.claim("w1", T0 + timedelta(hours=2), 60, 10) == []


def test_a_send_is_found_by_its_account_and_key_at_every_stage(outbox: OutboxStore) -> None:
    record, _ = outbox.record(_new("k"), [])
    assert outbox.find_key("acct", "k") == record
    assert outbox.find_key("other", "k") is None
    assert outbox.find_key("acct", "k2") is None
    taken = _claim_one(outbox)
    assert outbox.find_key("acct", "k") == outbox.find(taken.outgoing_id)
    assert outbox.find_key("acct", "k").stage is Stage.SENDING  # type: ignore[union-attr]
    withdrawn = outbox.record(_new("w"), [])[0]
    cancelled = outbox.cancel(withdrawn.outgoing_id, T0)
    assert cancelled is not None
    assert outbox.find_key("acct", "w") == cancelled


def _one_winner(outbox: SqlOutbox, outgoing_id: uuid.UUID, claimed: object) -> Stage:
    """The stage a send raced by a claim and a cancellation ended in, checked to be the
    winner's: the claim's answer, or the cancellation's."""
    assert isinstance(claimed, list)
    final = outbox.find(outgoing_id)
    assert final is not None
    if claimed:
        assert final.stage is Stage.SENDING
        assert outbox.finish(claimed[0].seq, "w1", AttemptResult(Stage.SENT, final.recipients), T0)
    else:
        assert final.stage is Stage.CANCELLED
    return final.stage


def test_a_cancellation_between_a_claims_read_and_its_write_wins(engine: sa.Engine) -> None:
    """The claim read the send as due, then the send was cancelled: the claim's write must
    find it due no longer."""
    outbox = SqlOutbox(engine)
    record = outbox.record(_new(), [])[0]
    claimed, _ = interleaved(
        engine,
        lambda: outbox.claim("w1", T0, 60, 1),
        lambda: outbox.cancel(record.outgoing_id, T0),
        after=_READING_THE_DUE,
    )
    assert _one_winner(outbox, record.outgoing_id, claimed) is Stage.CANCELLED


def test_a_cancellation_meeting_a_claims_open_write_loses(engine: sa.Engine) -> None:
    """The claim has taken the send but not committed when the cancellation comes: the
    cancellation must wait for it, and then find the send taken."""
    outbox = SqlOutbox(engine)
    record = outbox.record(_new(), [])[0]
    claimed, cancelled = overlapped(
        engine,
        lambda: outbox.claim("w1", T0, 60, 1),
        lambda: outbox.cancel(record.outgoing_id, T0),
        at=_TAKING_A_SEND,
    )
    assert _one_winner(outbox, record.outgoing_id, claimed) is Stage.SENDING
    assert isinstance(cancelled, OutgoingRecord)
    assert cancelled.stage is Stage.SENDING


def test_finishing_needs_the_lease_and_writes_each_recipient(outbox: OutboxStore) -> None:
    record = outbox.record(_new(), [])[0]
    claimed = _claim_one(outbox)
    done = (
        Recipient(AddressField.TO, "a@example.net", RecipientState.ACCEPTED, 250),
        Recipient(AddressField.BCC, "b@example.net", RecipientState.REFUSED, 550),
    )
    assert not outbox.finish(claimed.seq, "someone-else", AttemptResult(Stage.SENT, done), T0)
    assert outbox.begin_transmission(claimed.seq, "w1", T0)
    assert outbox.finish(claimed.seq, "w1", AttemptResult(Stage.SENT, done), T0)
    final = outbox.find(record.outgoing_id)
    assert final is not None
    assert final.stage is Stage.SENT
    assert final.recipients == done
    assert final.finished_at == T0


def test_a_temporary_failure_waits_for_its_retry_time(outbox: OutboxStore) -> None:
    record = outbox.record(_new(), [])[0]
    claimed = _claim_one(outbox)
    retry_at = T0 + timedelta(minutes=5)
    result = AttemptResult(
        Stage.QUEUED, record.recipients, int(DeliveryCode.TEMPORARY_FAILURE), retry_at
    )
    assert outbox.finish(claimed.seq, "w1", result, T0)
    waiting = outbox.find(record.outgoing_id)
    assert waiting is not None
    assert (waiting.stage, waiting.failure_code) == (Stage.QUEUED, 71006)
    assert outbox.claim("w1", T0 + timedelta(minutes=4), 60, 10) == []
    again = _claim_one(outbox, at=retry_at)
    assert again.attempt_count == 2


@pytest.mark.parametrize("transmitted", [False, True])
def test_an_expired_lease_is_recovered_by_whether_a_transmission_began(
    outbox: OutboxStore, transmitted: bool
) -> None:
    record = outbox.record(_new(), [])[0]
    claimed = _claim_one(outbox)
    if transmitted:
        assert outbox.begin_transmission(claimed.seq, "w1", T0)
    # The lease (60 s) has not expired yet: nothing is recovered.
    assert outbox.recover(T0 + timedelta(seconds=30), T0, 5) == 0
    assert outbox.recover(T0 + timedelta(seconds=61), T0 + timedelta(seconds=61), 5) == 1
    after = outbox.find(record.outgoing_id)
    assert after is not None
    if transmitted:
        assert (after.stage, after.failure_code) == (Stage.FAILED, 71003)
    else:
        assert after.stage is Stage.QUEUED
    # The worker that lost its lease can no longer write anything.
    assert not outbox.begin_transmission(claimed.seq, "w1", T0 + timedelta(seconds=62))
    assert not outbox.finish(claimed.seq, "w1", AttemptResult(Stage.SENT, record.recipients), T0)


def test_a_send_whose_attempts_are_spent_by_crashes_ends_failed(outbox: OutboxStore) -> None:
    record = outbox.record(_new(), [])[0]
    at = T0
    for _ in range(2):
        _claim_one(outbox, at=at)
        at += timedelta(seconds=61)
        outbox.recover(at, at, 2)
    after = outbox.find(record.outgoing_id)
    assert after is not None
    assert (after.stage, after.failure_code, after.attempt_count) == (Stage.FAILED, 71002, 2)


def test_the_operator_listing_is_newest_first(outbox: OutboxStore) -> None:
    for i in range(3):
        outbox.record(_new(f"k{i}", at=T0 + timedelta(minutes=i)), [])
    listed = outbox.listing(10)
    assert [entry.idempotency_key for entry in listed] == ["k2", "k1", "k0"]
    assert [e.idempotency_key for e in outbox.listing(10, [Stage.CANCELLED])] == []


def test_two_workers_claiming_together_take_each_send_once(engine: sa.Engine) -> None:
    """The first worker read the due sends, then the second took them all: the first's
    writes must find them taken."""
    outbox = SqlOutbox(engine)
    for i in range(6):
        outbox.record(_new(f"k{i}"), [])

    def work(worker: str) -> list[int]:
        taken: list[int] = []
        while True:
            claimed = outbox.claim(worker, T0, 60, 3)
            if not claimed:
                return taken
            taken.extend(c.seq for c in claimed)

    first, second = interleaved(
        engine, lambda: work("w1"), lambda: work("w2"), after=_READING_THE_DUE
    )
    assert first == []
    assert isinstance(second, list)
    every = [*first, *second]
    assert len(every) == 6
    assert len(set(every)) == 6


def test_instants_given_in_another_zone_are_kept_and_compared_as_instants(
    outbox: OutboxStore,
) -> None:
    east = timezone(timedelta(hours=2))
    record, _ = outbox.record(_new(at=T0.astimezone(east)), [])
    assert record.queued_at == T0
    assert record.queued_at.utcoffset() == timedelta(0)
    # Not yet due a minute before, given in UTC; due at its instant, given in the east.
    assert outbox.claim("w1", T0 - timedelta(minutes=1), 60, 10) == []
    (claimed,) = outbox.claim("w1", T0.astimezone(east), 60, 10)
    assert claimed.outgoing_id == record.outgoing_id


def _waiting(key: str, until: datetime) -> NewOutgoing:
    return dataclasses.replace(_new(key), send_after=until)


def test_a_send_asked_to_wait_is_not_claimed_before_its_instant(outbox: OutboxStore) -> None:
    until = T0 + timedelta(hours=1)
    record, _ = outbox.record(_waiting("later", until), [])
    assert record.send_after == until
    assert outbox.next_due() == until
    assert outbox.claim("w1", T0, 60, 10) == []
    assert outbox.claim("w1", until - timedelta(microseconds=1), 60, 10) == []
    assert outbox.find(record.outgoing_id).stage is Stage.QUEUED  # type: ignore[union-attr]
    (claimed,) = outbox.claim("w1", until, 60, 10)
    assert claimed.outgoing_id == record.outgoing_id
    assert outbox.claim("w2", until + timedelta(hours=1), 60, 10) == []
    assert outbox.next_due() is None


def test_a_send_due_sooner_is_claimed_while_a_later_one_waits(outbox: OutboxStore) -> None:
    later = outbox.record(_waiting("later", T0 + timedelta(days=2)), [])[0]
    now = outbox.record(_new("now"), [])[0]
    assert outbox.next_due() == T0
    (claimed,) = outbox.claim("w1", T0 + timedelta(days=1), 60, 10)
    assert claimed.outgoing_id == now.outgoing_id
    assert outbox.next_due() == T0 + timedelta(days=2)
    assert outbox.find(later.outgoing_id).stage is Stage.QUEUED  # type: ignore[union-attr]


def test_an_instant_already_past_is_due_at_once(outbox: OutboxStore) -> None:
    record, _ = outbox.record(_waiting("past", T0 - timedelta(days=1)), [])
    assert record.send_after == T0 - timedelta(days=1)
    (claimed,) = outbox.claim("w1", T0, 60, 10)
    assert claimed.outgoing_id == record.outgoing_id


def test_a_waiting_send_cancelled_before_its_instant_leaves_nothing_to_deliver(
    outbox: OutboxStore,
) -> None:
    until = T0 + timedelta(hours=1)
    record, _ = outbox.record(_waiting("later", until), [])
    withdrawn = outbox.cancel(record.outgoing_id, T0 + timedelta(minutes=10))
    assert withdrawn is not None
    assert withdrawn.stage is Stage.CANCELLED
    assert withdrawn.send_after == until
    assert outbox.claim("w1", until + timedelta(days=1), 60, 10) == []
    assert outbox.next_due() is None


def test_a_send_after_given_in_another_zone_is_read_back_in_utc(outbox: OutboxStore) -> None:
    east = timezone(timedelta(hours=5, minutes=30))
    until = T0 + timedelta(hours=3)
    record, _ = outbox.record(_waiting("zoned", until.astimezone(east)), [])
    assert record.send_after == until
    assert record.send_after is not None
    assert record.send_after.utcoffset() == timedelta(0)
    assert [e.record.send_after for e in outbox.listing(10)] == [until]
    assert outbox.claim("w1", until.astimezone(east) - timedelta(seconds=1), 60, 10) == []
    assert len(outbox.claim("w1", until.astimezone(east), 60, 10)) == 1


def test_a_retry_of_a_send_that_waited_keeps_its_instant(outbox: OutboxStore) -> None:
    until = T0 + timedelta(minutes=30)
    record, _ = outbox.record(_waiting("retried", until), [])
    claimed = _claim_one(outbox, at=until)
    retry_at = until + timedelta(minutes=5)
    result = AttemptResult(Stage.QUEUED, record.recipients, 71006, retry_at)
    assert outbox.finish(claimed.seq, "w1", result, until)
    assert outbox.next_due() == retry_at
    again = outbox.find(record.outgoing_id)
    assert again is not None
    assert again.send_after == until
    assert _claim_one(outbox, at=retry_at).attempt_count == 2
