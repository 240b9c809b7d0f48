"""What the console relies on from the store, on SQLite and PostgreSQL: one owner password
whose change ends every session, sessions found only by their token's hash and only until
they expire, wrong passwords counted per client even when counted at once, and the counts
of the overview; and the 0023 migration both ways."""

from __future__ import annotations

import dataclasses
import threading
import uuid
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa

from drafting.test_draft_store_contract import _new as new_draft
from mailfathom.adapters.sql import migrate
from mailfathom.adapters.sql.console import SqlConsoleOverview, SqlConsoleStore
from mailfathom.adapters.sql.drafts import SqlDraftStore
from mailfathom.adapters.sql.folder_creations import SqlFolderCreations
from mailfathom.adapters.sql.outbox import SqlOutbox
from mailfathom.adapters.sql.owner_alerts import SqlOwnerAlerts
from mailfathom.adapters.sql.schema import mutation_records
from mailfathom.app.confirmation.ports import OwnerAlert
from mailfathom.app.console.ports import ConsoleSession, LoginFailures, OutboxState
from mailfathom.domain.mutations import MutationFailure, MutationState

from .test_outbox_contract import _new

T0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def _session(token_hash: str, *, signed_in: bool = True, lasts: int = 3600) -> ConsoleSession:
    return ConsoleSession(
        token_hash=token_hash,
        csrf_secret="csrf-" + token_hash[:32],
        signed_in=signed_in,
        created_at=T0,
        expires_at=T0 + timedelta(seconds=lasts),
    )


def test_there_is_no_owner_password_until_one_is_set_and_a_new_one_replaces_it(
    engine: sa.Engine,
) -> None:
    store = SqlConsoleStore(engine)
    assert store.owner_password_hash() is None
    store.set_owner_password("$argon2id$first", T0)
    store.set_owner_password("$argon2id$second", T0 + timedelta(minutes=1))
    assert store.owner_password_hash() == "$argon2id$second"


def test_a_session_is_found_by_its_hash_until_it_expires(engine: sa.Engine) -> None:
    store = SqlConsoleStore(engine)
    store.open_session(_session("a" * 64), T0)
    assert store.find_session("a" * 64, T0) == _session("a" * 64)
    assert store.find_session("b" * 64, T0) is None
    assert store.find_session("a" * 64, T0 + timedelta(seconds=3600)) is None


def test_opening_a_session_deletes_the_expired_ones(engine: sa.Engine) -> None:
    store = SqlConsoleStore(engine)
    store.open_session(_session("a" * 64, lasts=60), T0)
    store.open_session(_session("b" * 64), T0 + timedelta(seconds=61))
    with engine.connect() as c:
        left = c.execute(sa.text("SELECT token_hash FROM console_sessions")).scalars().all()
    assert left == ["b" * 64]


def test_ending_a_session_is_idempotent_and_leaves_the_others(engine: sa.Engine) -> None:
    store = SqlConsoleStore(engine)
    store.open_session(_session("a" * 64), T0)
    store.open_session(_session("b" * 64, signed_in=False), T0)
    assert store.end_session("a" * 64) is True
    assert store.end_session("a" * 64) is False
    assert store.find_session("a" * 64, T0) is None
    assert store.find_session("b" * 64, T0) == _session("b" * 64, signed_in=False)


def test_only_the_newest_sign_in_forms_are_kept(engine: sa.Engine) -> None:
    store = SqlConsoleStore(engine)
    for signed in ("A" * 64, "B" * 64):
        store.open_session(_session(signed), T0)
    forms = [f"{n:064d}" for n in range(6)]
    for n, form in enumerate(forms):
        made = dataclasses.replace(
            _session(form, signed_in=False), created_at=T0 + timedelta(seconds=n)
        )
        store.open_session(made, T0, forms_kept=3)
    kept = [f for f in forms if store.find_session(f, T0) is not None]
    assert kept == forms[-3:]
    assert store.find_session("A" * 64, T0) is not None
    assert store.find_session("B" * 64, T0) is not None


def test_a_new_owner_password_ends_every_session(engine: sa.Engine) -> None:
    store = SqlConsoleStore(engine)
    store.set_owner_password("$argon2id$first", T0)
    store.open_session(_session("a" * 64), T0)
    store.set_owner_password("$argon2id$second", T0)
    assert store.find_session("a" * 64, T0) is None


def test_tries_are_counted_per_client_and_forgotten_on_request(engine: sa.Engine) -> None:
    store = SqlConsoleStore(engine)
    assert store.failures("192.0.2.1") is None
    assert store.count_try([("192.0.2.1", 2)], T0) == 0
    assert store.count_try([("192.0.2.1", 2)], T0 + timedelta(seconds=5)) == 0
    counted = store.failures("192.0.2.1")
    assert counted == LoginFailures(2, T0 + timedelta(seconds=5))
    # Two free tries spent: the next is due 30 seconds after the last.
    assert store.count_try([("192.0.2.1", 2)], T0 + timedelta(seconds=20)) == 15
    assert store.failures("192.0.2.1") == counted
    assert store.count_try([("192.0.2.1", 2)], T0 + timedelta(seconds=35)) == 0
    assert store.count_try([("192.0.2.2", 2)], T0) == 0
    store.forget_failures("192.0.2.1")
    assert store.failures("192.0.2.1") is None
    assert store.failures("192.0.2.2") is not None


def test_a_bound_not_due_counts_the_try_under_no_bound(engine: sa.Engine) -> None:
    store = SqlConsoleStore(engine)
    assert store.count_try([("*", 1)], T0) == 0
    assert store.count_try([("192.0.2.1", 5), ("*", 1)], T0) == 30
    assert store.failures("192.0.2.1") is None
    assert store.failures("*") == LoginFailures(1, T0)


def test_tries_at_once_are_counted_only_while_due(engine: sa.Engine) -> None:
    store = SqlConsoleStore(engine)
    start = threading.Barrier(8)
    answers: list[int] = []

    def count(client: str, free: int) -> None:
        start.wait()
        for _ in range(5):
            answers.append(store.count_try([(client, free), ("*", 1000)], T0))

    threads = [threading.Thread(target=count, args=("192.0.2.1", 7)) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers.count(0) == 7
    assert store.failures("192.0.2.1") == LoginFailures(7, T0)
    assert store.failures("*") == LoginFailures(7, T0)


def test_the_overview_counts_alerts_sends_by_state_and_mutations(engine: sa.Engine) -> None:
    overview = SqlConsoleOverview(engine)
    empty = overview.counts(T0)
    assert (empty.alerts_waiting, empty.mutations_pending, empty.mutations_dead_lettered) == (
        0,
        0,
        0,
    )
    assert set(empty.outbox.values()) == {0}

    # Only an alert whose draft is still live is waiting.
    live, _ = SqlDraftStore(engine).create(new_draft())
    alerts = SqlOwnerAlerts(engine)
    alerts.raise_alert(OwnerAlert("k1", "acct", str(live.draft_id), "confirmation_unavailable", T0))
    alerts.raise_alert(OwnerAlert("k3", "acct", str(uuid.uuid4()), "confirmation_unavailable", T0))
    alerts.raise_alert(OwnerAlert("k2", "acct", "d2", "confirmation_unavailable", T0))
    alerts.dismiss("k2", T0)
    # An identifier no draft can have names no live draft, and breaks no count.
    alerts.raise_alert(OwnerAlert("k4", "acct", "not-a-draft", "confirmation_unavailable", T0))

    outbox = SqlOutbox(engine)
    outbox.record(_new("due"), [])
    later = T0 + timedelta(hours=1)
    outbox.record(dataclasses.replace(_new("held"), not_before=later, send_after=later), [])
    cancelled, _ = outbox.record(_new("cancelled"), [])
    outbox.cancel(cancelled.outgoing_id, T0)

    with engine.begin() as c:
        for state in ("pending", "converging", "dead-lettered", "completed"):
            c.execute(
                sa.insert(mutation_records).values(
                    record_id=uuid.uuid4(),
                    kind="flags",
                    account_id="acct",
                    stored_email_id=uuid.uuid4(),
                    folder_id=1,
                    value="{}",
                    requester="agent",
                    request_id=state,
                    state=state,
                    attempts=0,
                    created_at=T0,
                    updated_at=T0,
                )
            )

    counts = overview.counts(T0)
    assert counts.alerts_waiting == 1
    assert counts.outbox[OutboxState.QUEUED] == 1
    assert counts.outbox[OutboxState.HELD] == 1
    assert counts.outbox[OutboxState.CANCELLED] == 1
    assert counts.outbox[OutboxState.SENT] == 0
    assert (counts.mutations_pending, counts.mutations_dead_lettered) == (2, 1)
    assert overview.counts(later).outbox[OutboxState.HELD] == 0


def test_the_overview_counts_folder_creations_among_the_mailbox_changes(
    engine: sa.Engine,
) -> None:
    """The mailbox-changes page lists folder creations, so the overview counts them too."""
    creations = SqlFolderCreations(engine)
    _, converging, dead, done = (
        creations.request("acct", name, name, None, "agent", name, T0).creation_id
        for name in ("Pending", "Converging", "Dead", "Done")
    )
    creations.begin(converging, "Converging", T0)
    creations.settle(dead, MutationState.DEAD_LETTERED, int(MutationFailure.FOLDER_EXISTS), T0)
    creations.settle(done, MutationState.COMPLETED, None, T0)
    counts = SqlConsoleOverview(engine).counts(T0)
    assert (counts.mutations_pending, counts.mutations_dead_lettered) == (2, 1)


def test_the_migration_goes_down_and_up_again(engine: sa.Engine) -> None:
    SqlConsoleStore(engine).set_owner_password("$argon2id$x", T0)
    migrate.downgrade(engine, "0022_answering_budget")
    assert "console_sessions" not in sa.inspect(engine).get_table_names()
    migrate.upgrade(engine)
    assert SqlConsoleStore(engine).owner_password_hash() is None
