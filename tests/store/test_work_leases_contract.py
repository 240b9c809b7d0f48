"""What the lease loop relies on from the store's work leases, on SQLite and PostgreSQL: a
free or expired lease is claimed by one worker under a new fence, renewal and release act only
for the holder under the fence it claimed, workers count one another by heartbeat, and a write
made under a fence that is no longer the holder's is refused before anything is written."""

from __future__ import annotations

import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa

from mailfathom.adapters.sql.fencing import StoreFencing
from mailfathom.adapters.sql.schema import accounts, work_leases
from mailfathom.adapters.sql.work_leases import SqlWorkLeases
from mailfathom.app.sync.lease_ports import Lease, LeaseKind
from mailfathom.domain.errors import LeaseLost

T0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
LEASE = timedelta(seconds=30)
ACCOUNT = LeaseKind.ACCOUNT
SUBJECTS = ["a1", "a2", "a3"]


@pytest.fixture
def leases(engine: sa.Engine) -> SqlWorkLeases:
    store = SqlWorkLeases(engine)
    store.offer(ACCOUNT, SUBJECTS)
    return store


def _expiry(engine: sa.Engine, subject: str) -> datetime | None:
    with engine.connect() as c:
        expires: datetime | None = c.execute(
            sa.select(work_leases.c.expires_at).where(work_leases.c.subject == subject)
        ).scalar_one()
        return expires


def _write_account(engine: sa.Engine, account_id: str) -> None:
    with engine.begin() as c:
        c.execute(
            sa.insert(accounts).values(
                account_id=account_id, display_name="x", kind="imap", created_at=T0
            )
        )


def _stored_accounts(engine: sa.Engine) -> set[str]:
    with engine.connect() as c:
        return set(c.execute(sa.select(accounts.c.account_id)).scalars())


def test_offering_twice_keeps_one_free_row_per_subject(leases: SqlWorkLeases) -> None:
    leases.offer(ACCOUNT, [*SUBJECTS, "a4"])
    assert leases.holders(ACCOUNT) == {"a1": None, "a2": None, "a3": None, "a4": None}
    assert leases.holders(LeaseKind.DEPLOYMENT) == {}


def test_a_claim_takes_free_leases_up_to_the_limit_each_under_a_new_fence(
    leases: SqlWorkLeases,
) -> None:
    first = leases.claim("w1", ACCOUNT, SUBJECTS, T0, T0 + LEASE, limit=2)
    assert len(first) == 2
    assert all(lease.fence == 1 for lease in first)
    rest = leases.claim("w2", ACCOUNT, SUBJECTS, T0, T0 + LEASE, limit=5)
    assert [lease.subject for lease in rest] == sorted(set(SUBJECTS) - {x.subject for x in first})
    assert leases.claim("w3", ACCOUNT, SUBJECTS, T0, T0 + LEASE, limit=5) == []
    holders = leases.holders(ACCOUNT)
    assert Counter(holders.values()) == Counter({"w1": 2, "w2": 1})


def test_an_expired_lease_is_taken_over_and_its_former_holder_can_neither_renew_nor_release(
    leases: SqlWorkLeases,
) -> None:
    (held,) = leases.claim("w1", ACCOUNT, ["a1"], T0, T0 + LEASE, limit=1)
    later = T0 + LEASE / 2
    assert leases.renew("w1", [held], later, later + LEASE) == {"a1"}
    # Renewed: still held at the first expiry.
    assert leases.claim("w2", ACCOUNT, ["a1"], T0 + LEASE, T0 + 2 * LEASE, limit=1) == []
    expired = later + LEASE
    (taken,) = leases.claim("w2", ACCOUNT, ["a1"], expired, expired + LEASE, limit=1)
    assert taken == Lease(ACCOUNT, "a1", held.fence + 1)
    assert leases.renew("w1", [held], expired, expired + LEASE) == set()
    leases.release("w1", [held])
    assert leases.holders(ACCOUNT)["a1"] == "w2"
    assert leases.renew("w2", [taken], expired, expired + LEASE) == {"a1"}


def test_a_released_lease_is_free_at_once_and_the_next_claim_fences_higher(
    leases: SqlWorkLeases,
) -> None:
    (held,) = leases.claim("w1", ACCOUNT, ["a2"], T0, T0 + LEASE, limit=1)
    leases.release("w1", [held])
    assert leases.holders(ACCOUNT)["a2"] is None
    (again,) = leases.claim("w2", ACCOUNT, ["a2"], T0, T0 + LEASE, limit=1)
    assert again.fence == held.fence + 1


def test_a_worker_takes_back_its_own_expired_lease_under_a_new_fence(
    leases: SqlWorkLeases,
) -> None:
    """After an outage, a failed release or a restart under the same name, the rows still
    name the worker: once expired they are claimable like any other, by it too."""
    (held,) = leases.claim("w1", ACCOUNT, ["a3"], T0, T0 + LEASE, limit=1)
    assert leases.claim("w1", ACCOUNT, ["a3"], T0 + LEASE / 2, T0 + LEASE, limit=1) == []
    expired = T0 + 2 * LEASE
    (again,) = leases.claim("w1", ACCOUNT, ["a3"], expired, expired + LEASE, limit=1)
    assert again == Lease(ACCOUNT, "a3", held.fence + 1)
    # The work begun under the former claim is fenced off: it may not go on beside the new.
    assert leases.renew("w1", [held], expired, expired + LEASE) == set()
    assert leases.renew("w1", [again], expired, expired + LEASE) == {"a3"}


def test_racing_claims_give_each_lease_to_one_worker(engine: sa.Engine) -> None:
    store = SqlWorkLeases(engine)
    subjects = [f"r{i:02d}" for i in range(24)]
    store.offer(ACCOUNT, subjects)
    start = threading.Barrier(6)

    def claim(worker: str) -> list[Lease]:
        start.wait()
        taken: list[Lease] = []
        for _ in range(6):
            taken += store.claim(worker, ACCOUNT, subjects, T0, T0 + LEASE, limit=2)
        return taken

    with ThreadPoolExecutor(6) as pool:
        results = list(pool.map(claim, [f"w{i}" for i in range(6)]))
    claimed = [lease.subject for taken in results for lease in taken]
    assert sorted(claimed) == subjects
    holders = store.holders(ACCOUNT)
    for worker, taken in zip([f"w{i}" for i in range(6)], results, strict=True):
        assert all(holders[lease.subject] == worker for lease in taken)


def test_workers_count_one_another_by_heartbeat_until_they_depart(leases: SqlWorkLeases) -> None:
    assert leases.beat("w2", T0, T0 + LEASE) == ["w2"]
    assert leases.beat("w1", T0, T0 + LEASE) == ["w1", "w2"]
    assert leases.beat("w1", T0 + LEASE, T0 + 2 * LEASE) == ["w1"]  # w2 was not seen since
    leases.depart("w1")
    assert leases.beat("w3", T0, T0 + LEASE) == ["w2", "w3"]


def test_writes_under_the_holders_fence_go_through(
    engine: sa.Engine, leases: SqlWorkLeases
) -> None:
    (held,) = leases.claim("w1", ACCOUNT, ["a1"], T0, T0 + LEASE, limit=1)
    lost = threading.Event()
    with StoreFencing(engine).fenced("w1", held, lost.set):
        _write_account(engine, "a1")
        with engine.connect() as c:  # a read is not a write: never refused
            c.execute(sa.select(accounts.c.account_id)).all()
    assert _stored_accounts(engine) == {"a1"}
    assert not lost.is_set()


def test_a_write_under_a_fence_taken_over_is_refused_and_nothing_is_written(
    engine: sa.Engine, leases: SqlWorkLeases
) -> None:
    (held,) = leases.claim("w1", ACCOUNT, ["a1"], T0, T0 + LEASE, limit=1)
    expired = T0 + 2 * LEASE
    leases.claim("w2", ACCOUNT, ["a1"], expired, expired + LEASE, limit=1)
    lost = threading.Event()
    with StoreFencing(engine).fenced("w1", held, lost.set), pytest.raises(LeaseLost):
        _write_account(engine, "a1")
    assert lost.is_set()
    assert _stored_accounts(engine) == set()
    # Outside the fence the same write is nobody's business of the lease.
    _write_account(engine, "a1")
    assert _stored_accounts(engine) == {"a1"}


def test_a_write_after_giving_the_lease_up_is_refused(
    engine: sa.Engine, leases: SqlWorkLeases
) -> None:
    (held,) = leases.claim("w1", ACCOUNT, ["a2"], T0, T0 + LEASE, limit=1)
    leases.release("w1", [held])
    with StoreFencing(engine).fenced("w1", held, lambda: None), pytest.raises(LeaseLost):
        _write_account(engine, "a2")
    assert _stored_accounts(engine) == set()


def test_a_takeover_comes_after_the_old_holders_open_write_and_fences_the_next(
    engine: sa.Engine, leases: SqlWorkLeases
) -> None:
    """The old holder's transaction that passed the check commits whole before the new
    holder's claim takes effect (PostgreSQL skips the row it holds FOR SHARE, SQLite's claim
    waits for its write lock); its next transaction is refused."""
    (held,) = leases.claim("w1", ACCOUNT, ["a1"], T0, T0 + LEASE, limit=1)
    expired = T0 + 2 * LEASE
    fencing = StoreFencing(engine)
    claims: list[list[Lease]] = []
    with fencing.fenced("w1", held, lambda: None):
        with engine.begin() as c:
            c.execute(
                sa.insert(accounts).values(
                    account_id="a1", display_name="x", kind="imap", created_at=T0
                )
            )
            racing = threading.Thread(
                target=lambda: claims.append(
                    leases.claim("w2", ACCOUNT, ["a1"], expired, expired + LEASE, limit=1)
                )
            )
            racing.start()
            racing.join(0.5)
        racing.join()
        if not claims[0]:  # skipped while locked: claimable once the write committed
            claims.append(leases.claim("w2", ACCOUNT, ["a1"], expired, expired + LEASE, limit=1))
        assert [lease.fence for lease in claims[-1]] == [held.fence + 1]
        with pytest.raises(LeaseLost):
            _write_account(engine, "a2")
    assert _stored_accounts(engine) == {"a1"}


def test_renewal_goes_on_beside_the_holders_own_open_write(postgres_engine: sa.Engine) -> None:
    """A fenced write holds its lease row FOR SHARE until it commits: renewal neither waits
    for it nor lets it hold up the renewal of the worker's other leases, and counts the
    lease under that write as kept (the write proves the fence still stands)."""
    engine = postgres_engine
    leases = SqlWorkLeases(engine)
    leases.offer(ACCOUNT, SUBJECTS)
    held = leases.claim("w1", ACCOUNT, ["a1", "a2"], T0, T0 + LEASE, limit=2)
    by_subject = {lease.subject: lease for lease in held}
    renewed: list[set[str]] = []
    later = T0 + LEASE / 2
    with StoreFencing(engine).fenced("w1", by_subject["a1"], lambda: None), engine.begin() as c:
        c.execute(
            sa.insert(accounts).values(
                account_id="a1", display_name="x", kind="imap", created_at=T0
            )
        )
        renewing = threading.Thread(
            target=lambda: renewed.append(leases.renew("w1", held, later, later + LEASE)),
            daemon=True,
        )
        renewing.start()
        renewing.join(10)
        assert not renewing.is_alive(), "renewal waited behind the open write"
    assert renewed == [{"a1", "a2"}]
    assert _expiry(engine, "a2") == later + LEASE


def test_the_lease_clock_is_the_stores_where_several_machines_share_it(
    engine: sa.Engine,
) -> None:
    """SQLite is one machine's, so its clock is the one given; PostgreSQL's clock is the one
    every worker reads, whatever its own machine's says."""
    leases = SqlWorkLeases(engine, clock=lambda: T0)
    if engine.dialect.name == "sqlite":
        assert leases.now() == T0
    else:
        assert abs(leases.now() - datetime.now(UTC)) < LEASE


def test_renewing_many_leases_costs_a_few_statements_however_many(engine: sa.Engine) -> None:
    """A round renews every lease a worker holds: under load, one transaction per lease kept
    the round (and the heartbeat after it) late enough for leases to be lost."""
    leases = SqlWorkLeases(engine)
    subjects = [f"m{i:03d}" for i in range(120)]
    leases.offer(ACCOUNT, subjects)
    held = leases.claim("w1", ACCOUNT, subjects, T0, T0 + LEASE, limit=len(subjects))
    taken = leases.claim("w2", ACCOUNT, subjects, T0 + 2 * LEASE, T0 + 3 * LEASE, limit=1)
    statements: list[str] = []

    def count(*args: object) -> None:
        statements.append(str(args[2]))

    sa.event.listen(engine, "before_cursor_execute", count)
    try:
        later = T0 + LEASE / 2
        kept = leases.renew("w1", held, later, later + LEASE)
    finally:
        sa.event.remove(engine, "before_cursor_execute", count)
    assert kept == set(subjects) - {lease.subject for lease in taken}
    assert len(statements) <= 4, statements
    assert _expiry(engine, "m119" if taken[0].subject != "m119" else "m000") == T0 + LEASE * 1.5
