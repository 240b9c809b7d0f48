"""The console's outbox and mailbox-changes use cases on the in-memory stores: how each send
is shown (held until its instant, outcome unknown apart from refused), a withdrawal through
the operator's own path, and open and dead-lettered changes with their retry."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from fakes.deployment import Clock
from fakes.mutations import InMemoryMutationStore
from fakes.outbox import InMemoryOutbox
from fakes.store import MemoryStore
from mailfathom.app.console.mutations import ConsoleMutations
from mailfathom.app.console.outbox import ConsoleOutbox, SendState, send_state
from mailfathom.app.flags.administer_mutations import MutationAdministration, Retried
from mailfathom.app.flags.set_mail_flags import FlagChangeRequest, MailFlagChangeRecorder
from mailfathom.app.sending.administer_outbox import OutboxAdministration, Withdrawn
from mailfathom.app.sending.ports import NewOutgoing
from mailfathom.app.shared.mailbox_selection import ServedAccount
from mailfathom.domain.access import ALL_PERMISSIONS, Caller
from mailfathom.domain.codes import DeliveryCode
from mailfathom.domain.content_state import RemoteFlags
from mailfathom.domain.mutations import MutationFailure, MutationState
from mailfathom.domain.outgoing import (
    AddressField,
    OutgoingKind,
    OutgoingRecord,
    Recipient,
    Stage,
)

T0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
AGENT = Caller(ALL_PERMISSIONS, "agent")


def _new(key: str, send_after: datetime | None = None) -> NewOutgoing:
    return NewOutgoing(
        outgoing_id=uuid.uuid4(),
        account_id="work",
        idempotency_key=key,
        caller="agent",
        kind=OutgoingKind.NEW,
        queued_at=T0,
        not_before=send_after or T0,
        message_id=f"<{key}@example.org>",
        envelope_from="me@example.org",
        mime=b"Subject: x\r\n\r\nbody\r\n",
        recipients=(Recipient(AddressField.TO, "a@example.net"),),
        send_after=send_after,
    )


def _record(stage: Stage, failure: int | None = None) -> OutgoingRecord:
    return OutgoingRecord(
        outgoing_id=uuid.uuid4(),
        account_id="work",
        caller="agent",
        kind=OutgoingKind.NEW,
        stage=stage,
        attempt_count=1,
        queued_at=T0,
        recipients=(),
        failure_code=failure,
    )


def test_each_stage_is_shown_and_a_lost_answer_is_told_from_a_refusal() -> None:
    assert send_state(_record(Stage.SENT), T0) is SendState.SENT
    assert send_state(_record(Stage.SENDING), T0) is SendState.SENDING
    assert send_state(_record(Stage.CANCELLED), T0) is SendState.CANCELLED
    assert send_state(_record(Stage.QUEUED), T0) is SendState.QUEUED
    refused = _record(Stage.FAILED, int(DeliveryCode.REFUSED_BY_SERVER))
    unknown = _record(Stage.FAILED, int(DeliveryCode.OUTCOME_UNKNOWN))
    assert send_state(refused, T0) is SendState.REFUSED
    assert send_state(unknown, T0) is SendState.UNKNOWN


def test_a_held_send_is_held_until_its_instant_and_withdrawn_once() -> None:
    outbox, clock = InMemoryOutbox(), Clock(T0)
    instant = T0 + timedelta(hours=2)
    held, _ = outbox.record(_new("held", instant), [])
    due, _ = outbox.record(_new("due"), [])
    console = ConsoleOutbox(OutboxAdministration(outbox, clock=clock), clock=clock)
    shown = {e.record.outgoing_id: e for e in console.entries()}
    assert shown[held.outgoing_id].state is SendState.HELD
    assert shown[due.outgoing_id].state is SendState.QUEUED
    assert all(e.withdrawable for e in shown.values())
    clock.advance(7200)
    assert {e.record.outgoing_id: e.state for e in console.entries()}[held.outgoing_id] is (
        SendState.QUEUED
    )

    first = console.withdraw(str(held.outgoing_id))
    assert first is not None
    assert (first.outcome, first.record.stage) == (Withdrawn.NOW, Stage.CANCELLED)
    again = console.withdraw(str(held.outgoing_id))
    assert again is not None
    assert again.outcome is Withdrawn.ALREADY_ENDED
    after = {e.record.outgoing_id: e for e in console.entries()}[held.outgoing_id]
    assert (after.state, after.withdrawable) == (SendState.CANCELLED, False)
    assert outbox.find(due.outgoing_id).stage is Stage.QUEUED  # type: ignore[union-attr]


def test_a_withdrawal_naming_nothing_held_answers_none() -> None:
    console = ConsoleOutbox(OutboxAdministration(InMemoryOutbox()))
    assert console.withdraw("not-an-identifier") is None
    assert console.withdraw(str(uuid.uuid4())) is None


def _changes() -> tuple[MemoryStore, uuid.UUID, list[str]]:
    memory = MemoryStore()
    inbox = memory.local.ensure_folder("work", "INBOX", "Inbox")
    memory.local.record_progress(inbox, 7, T0)
    (mail,) = memory.local.add_messages(inbox, 7, [(1, RemoteFlags(), 1)], T0)
    woken: list[str] = []
    recorder = MailFlagChangeRecorder(
        memory.mutations, memory.local, [ServedAccount("work", "Work", "continuous")]
    )
    request = FlagChangeRequest(
        str(mail), seen=True, keyword_change="add", keywords=["SecretLabel", "Other"]
    )
    recorder.record(AGENT, request)
    return memory, mail, woken


def _dead_letter(store: InMemoryMutationStore, record_id: uuid.UUID) -> None:
    store.begin([record_id], T0)
    store.settle([record_id], MutationState.DEAD_LETTERED, int(MutationFailure.ATTEMPTS_SPENT), T0)


def test_open_and_dead_lettered_changes_are_shown_with_their_reason_and_retried() -> None:
    memory, _, woken = _changes()
    administration = MutationAdministration(memory.mutations, memory.creations, wake=woken.append)
    console = ConsoleMutations(administration)
    entries = console.entries()
    assert len(entries) == 2
    keyword = next(e for e in entries if e.keywords is not None)
    assert keyword.keywords == 2
    assert {e.folder for e in entries} == {"Inbox"}
    seen = next(e for e in entries if e.keywords is None)
    assert console.retry(str(seen.record.record_id)).outcome is Retried.NOT_DEAD_LETTERED  # type: ignore[union-attr]

    _dead_letter(memory.mutations, seen.record.record_id)
    dead = {e.record.record_id: e.record for e in console.entries()}[seen.record.record_id]
    assert dead.state is MutationState.DEAD_LETTERED
    assert dead.last_error_code == MutationFailure.ATTEMPTS_SPENT
    retry = console.retry(str(seen.record.record_id))
    assert retry is not None
    assert (retry.outcome, retry.record.state) == (Retried.NOW, MutationState.PENDING)
    assert woken == ["work"]
    assert console.retry("not-an-identifier") is None
    assert console.retry(str(uuid.uuid4())) is None


def test_completed_changes_are_not_shown() -> None:
    memory, _, _ = _changes()
    console = ConsoleMutations(MutationAdministration(memory.mutations, memory.creations))
    for entry in console.entries():
        memory.mutations.begin([entry.record.record_id], T0)
        memory.mutations.settle([entry.record.record_id], MutationState.COMPLETED, None, T0)
    assert console.entries() == []
