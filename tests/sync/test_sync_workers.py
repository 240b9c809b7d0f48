"""`mailfathom worker --role sync` processes sharing accounts by lease on one PostgreSQL.

Several workers run over accounts of the test Dovecot: each account is held by exactly one,
the workers even out their shares, a SIGKILLed worker's accounts are taken over once its
leases expire, and every message is stored once, none lost."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa

from mailfathom.adapters.sql.engine import create_store_engine
from mailfathom.adapters.sql.schema import messages, work_leases
from servers.dovecot import DovecotServer, ImapAccount
from sync.helpers import sample
from sync.workers import (
    holders,
    kill,
    shares,
    start_continuous_sync,
    start_worker,
    stop,
    write_config,
)
from waiting import wait_for

pytestmark = [pytest.mark.timeout(300)]


@pytest.fixture
def engine(migrated_postgres_url: str) -> Iterator[sa.Engine]:
    created = create_store_engine(migrated_postgres_url)
    yield created
    created.dispose()


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:
        kill(process)


def _accounts(dovecot: DovecotServer, count: int, tag: str) -> list[ImapAccount]:
    return [dovecot.add_user(f"{tag}{i}-{id(dovecot) % 997}", f"pw-{tag}{i}") for i in range(count)]


def _fill(dovecot: DovecotServer, accounts: list[ImapAccount], each: int, round_: str) -> None:
    for index, account in enumerate(accounts):
        for n in range(each):
            dovecot.save_message(account.username, sample(f"{round_} {index}-{n}"))


def _stored(engine: sa.Engine) -> Counter[tuple[str, str]]:
    """How many rows each (account, Message-ID) has."""
    with engine.connect() as c:
        rows = c.execute(sa.select(messages.c.account_id, messages.c.message_id_header))
        return Counter((str(r.account_id), str(r.message_id_header)) for r in rows)


def test_two_workers_share_the_accounts_and_one_takes_over_what_a_killed_one_held(
    tmp_path: Path,
    dovecot: DovecotServer,
    engine: sa.Engine,
    migrated_postgres_url: str,
    processes: list[subprocess.Popen[bytes]],
) -> None:
    accounts = _accounts(dovecot, 4, "share")
    _fill(dovecot, accounts, 3, "first")
    config = write_config(tmp_path, migrated_postgres_url, accounts)
    first, second = start_worker(config, "w1"), start_worker(config, "w2")
    processes += [first, second]
    wait_for(lambda: shares(engine) == Counter({"w1": 2, "w2": 2}), "two accounts each")
    wait_for(lambda: sum(_stored(engine).values()) >= 12, "every message stored")
    held_by_first = {a for a, h in holders(engine).items() if h == "w1"}

    kill(first)
    _fill(dovecot, accounts, 2, "second")
    wait_for(lambda: shares(engine) == Counter({"w2": 4}), "the survivor holds all", timeout=30)
    wait_for(
        lambda: sum(_stored(engine).values()) >= 20,
        "the messages that arrived after the kill stored",
    )
    stored = _stored(engine)
    assert len(stored) == 20, "a message lost"
    assert set(stored.values()) == {1}, "a message stored twice"
    taken_over = {account for account, _ in stored if account in held_by_first}
    assert taken_over == held_by_first

    assert stop(second) == 0
    assert set(holders(engine).values()) == {None}, "a clean stop gives the leases up"


def test_three_workers_over_nine_accounts_hold_three_each(
    tmp_path: Path,
    dovecot: DovecotServer,
    engine: sa.Engine,
    migrated_postgres_url: str,
    processes: list[subprocess.Popen[bytes]],
) -> None:
    accounts = _accounts(dovecot, 9, "fair")
    config = write_config(tmp_path, migrated_postgres_url, accounts)
    processes.append(start_worker(config, "w1"))
    wait_for(lambda: shares(engine) == Counter({"w1": 9}), "the only worker holds all")
    processes += [start_worker(config, "w2"), start_worker(config, "w3")]
    wait_for(
        lambda: shares(engine) == Counter({"w1": 3, "w2": 3, "w3": 3}),
        "three accounts each",
        timeout=60,
    )


def test_a_continuous_sync_on_postgresql_shares_the_accounts_with_a_worker(
    tmp_path: Path,
    dovecot: DovecotServer,
    engine: sa.Engine,
    migrated_postgres_url: str,
    processes: list[subprocess.Popen[bytes]],
) -> None:
    accounts = _accounts(dovecot, 2, "beside")
    _fill(dovecot, accounts, 2, "beside")
    config = write_config(tmp_path, migrated_postgres_url, accounts)
    processes.append(start_continuous_sync(config))
    processes.append(start_worker(config, "w1"))
    wait_for(
        lambda: sorted(shares(engine).values()) == [1, 1] and None not in shares(engine),
        "one account each",
    )
    assert shares(engine)["w1"] == 1
    wait_for(lambda: sum(_stored(engine).values()) >= 4, "every message stored")
    assert set(_stored(engine).values()) == {1}


def test_a_worker_whose_lease_was_taken_over_ends_its_idle_sessions(
    tmp_path: Path,
    dovecot: DovecotServer,
    engine: sa.Engine,
    migrated_postgres_url: str,
    processes: list[subprocess.Popen[bytes]],
) -> None:
    (account,) = _accounts(dovecot, 1, "idle")
    config = write_config(tmp_path, migrated_postgres_url, [account])
    processes.append(start_worker(config, "w1"))
    wait_for(lambda: holders(engine) == {"a0": "w1"}, "the worker holds the account")
    wait_for(lambda: dovecot._session_pids(account.username), "the worker waits in IDLE")
    with engine.begin() as c:
        c.execute(
            sa.update(work_leases)
            .where(work_leases.c.subject == "a0")
            .values(
                holder="elsewhere",
                fence=work_leases.c.fence + 1,
                expires_at=datetime.now(UTC) + timedelta(hours=1),
            )
        )
    wait_for(
        lambda: not dovecot._session_pids(account.username),
        "the worker ended its sessions of the account",
        timeout=30,
    )
    assert processes[0].poll() is None, "the worker itself runs on"
    assert holders(engine) == {"a0": "elsewhere"}


def test_a_one_off_pass_is_refused_while_a_worker_holds_the_account(
    tmp_path: Path,
    dovecot: DovecotServer,
    engine: sa.Engine,
    migrated_postgres_url: str,
    processes: list[subprocess.Popen[bytes]],
) -> None:
    """Two carriers of one account's owner changes at once could both copy a move; a pass
    run by hand therefore takes the account's lease, and is refused while a worker has it."""
    accounts = _accounts(dovecot, 1, "once")
    _fill(dovecot, accounts, 1, "once")
    config = write_config(tmp_path, migrated_postgres_url, accounts)
    worker = start_worker(config, "w1")
    processes.append(worker)
    wait_for(lambda: holders(engine) == {"a0": "w1"}, "the worker holds the account")
    command = [sys.executable, "-m", "mailfathom", "sync", "--config", str(config)]
    refused = subprocess.run(command, capture_output=True, timeout=120, check=False)
    assert refused.returncode == 2
    assert b"31008" in refused.stderr
    assert holders(engine) == {"a0": "w1"}

    assert stop(worker) == 0
    done = subprocess.run(command, capture_output=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert holders(engine) == {"a0": None}, "the pass gave the lease up"
    assert sum(_stored(engine).values()) == 1


@pytest.mark.parametrize("role", ["sync", "embedding"])
def test_a_worker_that_would_synchronize_refuses_a_sqlite_store(tmp_path: Path, role: str) -> None:
    """SQLite has one writer: there one process synchronizes and embeds (`serve` or `sync
    --continuous`, holding every account's lease), and a fleet of workers is for PostgreSQL."""
    account = ImapAccount("127.0.0.1", 1, "nobody", "pw")
    config = write_config(tmp_path, f"sqlite:///{tmp_path / 'store.sqlite3'}", [account])
    command = [sys.executable, "-m", "mailfathom", "worker", "--config", str(config)]
    refused = subprocess.run(
        [*command, "--role", role], capture_output=True, timeout=120, check=False
    )
    assert refused.returncode == 2
    assert b"PostgreSQL" in refused.stderr


@pytest.mark.parametrize("name", ["w" * 129, "w\x07one"])
def test_a_worker_name_the_lease_rows_cannot_hold_is_refused(tmp_path: Path, name: str) -> None:
    """The lease rows hold a name of up to 128 characters: a longer one would make every
    heartbeat and claim fail, so the worker would run holding nothing."""
    account = ImapAccount("127.0.0.1", 1, "nobody", "pw")
    config = write_config(tmp_path, f"sqlite:///{tmp_path / 'store.sqlite3'}", [account])
    command = [sys.executable, "-m", "mailfathom", "worker", "--config", str(config)]
    refused = subprocess.run(
        [*command, "--role", "sync", "--id", name], capture_output=True, timeout=120, check=False
    )
    assert refused.returncode == 2
    assert b"11045" in refused.stderr
