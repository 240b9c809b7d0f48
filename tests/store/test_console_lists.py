"""The console's outbox and mailbox-changes pages never leave off a record the owner can act
on, however many newer ones stand, on SQLite, PostgreSQL and the in-memory fake: every send
still waiting (it can be withdrawn) and every dead-lettered change (it can be retried) is
listed, then the newest of the rest."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from mailfathom.app.console.mutations import SHOWN as CHANGES_SHOWN
from mailfathom.app.console.mutations import ConsoleMutations
from mailfathom.app.console.outbox import SHOWN as SENDS_SHOWN
from mailfathom.app.console.outbox import ConsoleOutbox, SendState
from mailfathom.app.flags.administer_mutations import MutationAdministration
from mailfathom.app.flags.set_mail_flags import FlagChangeRequest, MailFlagChangeRecorder
from mailfathom.app.sending.administer_outbox import OutboxAdministration
from mailfathom.app.sending.ports import NewOutgoing
from mailfathom.app.shared.mailbox_selection import ServedAccount
from mailfathom.domain.access import ALL_PERMISSIONS, Caller
from mailfathom.domain.content_state import RemoteFlags
from mailfathom.domain.mutations import MutationFailure, MutationState
from mailfathom.domain.outgoing import AddressField, OutgoingKind, Recipient, Stage
from store.conftest import Backend

T0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
AGENT = Caller(ALL_PERMISSIONS, "agent")


def _new(key: str, at: datetime, send_after: datetime | None = None) -> NewOutgoing:
    return NewOutgoing(
        outgoing_id=uuid.uuid4(),
        account_id="work",
        idempotency_key=key,
        caller="agent",
        kind=OutgoingKind.NEW,
        queued_at=at,
        not_before=send_after or at,
        message_id=f"<{key}@example.org>",
        envelope_from="me@example.org",
        mime=b"Subject: x\r\n\r\nbody\r\n",
        recipients=(Recipient(AddressField.TO, "a@example.net"),),
        send_after=send_after,
    )


def test_a_held_send_is_listed_behind_any_number_of_newer_finished_ones(
    backend: Backend,
) -> None:
    outbox = backend.outbox()
    held, _ = outbox.record(_new("held", T0, send_after=T0 + timedelta(days=7)), [])
    for n in range(SENDS_SHOWN + 5):
        at = T0 + timedelta(minutes=n + 1)
        done, _ = outbox.record(_new(f"done-{n}", at), [])
        outbox.cancel(done.outgoing_id, at)
    now = T0 + timedelta(hours=6)
    console = ConsoleOutbox(OutboxAdministration(outbox, clock=lambda: now), clock=lambda: now)
    entries = console.entries()
    first = entries[0]
    assert (first.record.outgoing_id, first.state) == (held.outgoing_id, SendState.HELD)
    assert first.withdrawable
    assert len(entries) == SENDS_SHOWN + 1
    finished = [e.record.stage for e in entries[1:]]
    assert finished == [Stage.CANCELLED] * SENDS_SHOWN
    assert entries[1].record.queued_at == T0 + timedelta(minutes=SENDS_SHOWN + 5)


def test_a_dead_lettered_change_is_listed_behind_any_number_of_newer_open_ones(
    backend: Backend,
) -> None:
    held = backend.held_mail()
    inbox = held.ensure_folder("work", "INBOX", "Inbox")
    held.record_progress(inbox, 7, T0)
    count = CHANGES_SHOWN + 5
    mails = held.add_messages(inbox, 7, [(n + 1, RemoteFlags(), 1) for n in range(count)], T0)
    recorder = MailFlagChangeRecorder(
        backend.mutations(), backend.folders(), [ServedAccount("work", "Work", "continuous")]
    )
    for mail in mails:
        recorder.record(AGENT, FlagChangeRequest(str(mail), seen=True))
    records = backend.mutation_records()
    oldest = records.listing(count + 1, (MutationState.PENDING,), None)[-1]
    mutations = backend.mutations()
    mutations.begin([oldest.record_id], T0)
    mutations.settle(
        [oldest.record_id], MutationState.DEAD_LETTERED, int(MutationFailure.ATTEMPTS_SPENT), T0
    )
    entries = ConsoleMutations(
        MutationAdministration(records, backend.creation_records())
    ).entries()
    assert entries[0].record.record_id == oldest.record_id
    assert entries[0].record.state is MutationState.DEAD_LETTERED
    assert len(entries) == CHANGES_SHOWN + 1
    assert {e.record.state for e in entries[1:]} == {MutationState.PENDING}


def test_folder_creations_are_listed_beside_message_changes_under_the_same_bounds(
    backend: Backend,
) -> None:
    """A dead-lettered folder creation comes first however many newer changes wait, and the
    open ones of both kinds share the page's bound, newest first."""
    held = backend.held_mail()
    inbox = held.ensure_folder("work", "INBOX", "Inbox")
    held.record_progress(inbox, 7, T0)
    mails = held.add_messages(
        inbox, 7, [(n + 1, RemoteFlags(), 1) for n in range(CHANGES_SHOWN)], T0
    )
    creations = backend.folder_creations()
    spent = creations.request("work", "Receipts", "Inbox/Receipts", inbox, "agent", "r1", T0)
    creations.begin(spent.creation_id, "INBOX/Receipts", T0)
    code = int(MutationFailure.ATTEMPTS_SPENT)
    creations.settle(spent.creation_id, MutationState.DEAD_LETTERED, code, T0)
    recorder = MailFlagChangeRecorder(
        backend.mutations(),
        backend.folders(),
        [ServedAccount("work", "Work", "continuous")],
        clock=lambda: T0 + timedelta(minutes=1),
    )
    for mail in mails:
        recorder.record(AGENT, FlagChangeRequest(str(mail), seen=True))
    later = T0 + timedelta(minutes=2)
    newest = creations.request("work", "Bills", "Bills", None, "agent", "r2", later)

    records = backend.mutation_records()
    entries = ConsoleMutations(
        MutationAdministration(records, backend.creation_records())
    ).entries()
    assert len(entries) == CHANGES_SHOWN + 1
    first, second = entries[:2]
    assert (first.record.record_id, first.record.state) == (
        spent.creation_id,
        MutationState.DEAD_LETTERED,
    )
    assert (first.folder, first.parent, first.record.last_error_code) == (
        "Inbox/Receipts",
        "Inbox",
        code,
    )
    assert (second.record.record_id, second.folder, second.parent) == (
        newest.creation_id,
        "Bills",
        None,
    )
    # The oldest message change is the one the bound leaves off.
    (oldest,) = records.listing(None, (MutationState.PENDING,), None)[-1:]
    assert oldest.record_id not in {e.record.record_id for e in entries}
