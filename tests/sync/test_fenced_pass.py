"""A synchronization pass whose worker lost the account's lease mid-way (stalled past its lease
while another worker claimed the account) has its next write refused: the batches committed
before the takeover stay, nothing after it is written, and the run stops without recording a
failure against the account. Real Dovecot, real PostgreSQL."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast

import pytest
import sqlalchemy as sa

from mailfathom.adapters.sql.schema import sync_failures
from mailfathom.adapters.sql.sync_store import SqlSyncStore
from mailfathom.app.sync.lease_ports import LeaseKind
from mailfathom.bootstrap import Services
from mailfathom.domain.config import SyncConfig
from mailfathom.domain.errors import LeaseLost, PassStopped
from servers.dovecot import DovecotServer, ImapAccount
from sync.helpers import deployment, imap_account_config, sample, stored_rows

LEASE = timedelta(seconds=30)


def test_a_pass_that_lost_its_lease_mid_way_writes_nothing_after_the_takeover(
    tmp_path: Path, dovecot: DovecotServer, imap_account: ImapAccount, migrated_postgres_url: str
) -> None:
    for n in range(6):
        dovecot.save_message(imap_account.username, sample(f"Fenced {n}"))
    account = imap_account_config(imap_account)
    config = replace(
        deployment(tmp_path, account, migrated_postgres_url),
        sync=SyncConfig(batch_messages=2),
    )
    with Services.open(config) as services:
        leases = services.work_leases()
        leases.offer(LeaseKind.ACCOUNT, [account.account_id])
        now = datetime.now(UTC)
        (held,) = leases.claim("w1", LeaseKind.ACCOUNT, [account.account_id], now, now + LEASE, 1)
        stored_at_takeover: list[int] = []

        def stall_past_the_lease(_alias: str, stored: int, _total: int) -> None:
            if stored and not stored_at_takeover:
                later = now + 2 * LEASE
                taken = leases.claim(
                    "w2", LeaseKind.ACCOUNT, [account.account_id], later, later + LEASE, 1
                )
                assert [lease.fence for lease in taken] == [held.fence + 1]
                stored_at_takeover.append(len(stored_rows(services, account.account_id)))

        lost = threading.Event()
        synchronizer = services.account_synchronizer()
        with (
            services.fencing().fenced("w1", held, lost.set),
            pytest.raises(LeaseLost),
        ):
            synchronizer.run_once(account, progress=stall_past_the_lease)
        assert lost.is_set()
        assert stored_at_takeover == [2]
        assert len(stored_rows(services, account.account_id)) == 2
        with services.engine.connect() as c:
            assert c.execute(sa.select(sa.func.count()).select_from(sync_failures)).scalar() == 0
        # The new holder's pass stores the rest, each message once.
        with services.fencing().fenced("w2", replace(held, fence=held.fence + 1), lost.set):
            synchronizer.run_once(account)
        subjects = sorted(r.subject for r in stored_rows(services, account.account_id))
        assert subjects == [f"Fenced {n}" for n in range(6)]


class _TakenOverAfterRemoving:
    """The store, with the account's lease taken over by another worker right after a pass
    commits the removal of expunged messages (and before it deletes their content)."""

    def __init__(self, store: SqlSyncStore, take_over: Callable[[], None]) -> None:
        self._store = store
        self._take_over = take_over

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def remove_uids(self, folder_id: int, uidvalidity: int, uids: Iterable[int]) -> list[str]:
        keys = self._store.remove_uids(folder_id, uidvalidity, uids)
        self._take_over()
        return keys


def test_a_worker_that_lost_its_lease_does_not_delete_content_the_new_holder_may_need(
    tmp_path: Path, dovecot: DovecotServer, imap_account: ImapAccount, migrated_postgres_url: str
) -> None:
    for n in range(2):
        dovecot.save_message(imap_account.username, sample(f"Kept {n}"))
    account = imap_account_config(imap_account)
    config = deployment(tmp_path, account, migrated_postgres_url)
    with Services.open(config) as services:
        leases = services.work_leases()
        leases.offer(LeaseKind.ACCOUNT, [account.account_id])
        now = datetime.now(UTC)
        (held,) = leases.claim("w1", LeaseKind.ACCOUNT, [account.account_id], now, now + LEASE, 1)
        lost = threading.Event()
        with services.fencing().fenced("w1", held, lost.set):
            services.account_synchronizer().run_once(account)
        (first, _) = stored_rows(services, account.account_id)
        dovecot.doveadm(
            "expunge", "-u", imap_account.username, "mailbox", "INBOX", "uid", str(first.uid)
        )

        def take_over() -> None:
            later = now + 2 * LEASE
            leases.claim("w2", LeaseKind.ACCOUNT, [account.account_id], later, later + LEASE, 1)

        services.store = cast("SqlSyncStore", _TakenOverAfterRemoving(services.store, take_over))
        with services.fencing().fenced("w1", held, lost.set), pytest.raises(LeaseLost):
            services.account_synchronizer().run_once(account)
        assert lost.is_set()
        assert len(stored_rows(services, account.account_id)) == 1
        assert services.content.exists(first.content_key)


def test_a_pass_told_to_stop_ends_at_its_next_batch_boundary_keeping_what_it_fetched(
    tmp_path: Path, dovecot: DovecotServer, imap_account: ImapAccount, migrated_postgres_url: str
) -> None:
    """A worker giving an account up sets the run's stop event: the pass commits the batches
    it already fetched and fetches no more, rather than going on until a write is refused."""
    for n in range(20):
        dovecot.save_message(imap_account.username, sample(f"Stopped {n:02d}"))
    account = imap_account_config(imap_account)
    config = replace(
        deployment(tmp_path, account, migrated_postgres_url),
        sync=SyncConfig(batch_messages=2),
    )
    with Services.open(config) as services:
        stop = threading.Event()

        def give_up(_alias: str, stored: int, _total: int) -> None:
            if stored:
                stop.set()

        synchronizer = services.account_synchronizer()
        with pytest.raises(PassStopped):
            synchronizer.run_once(account, progress=give_up, stop=stop)
        stored = len(stored_rows(services, account.account_id))
        assert 2 <= stored < 20
        assert stored % 2 == 0, "whole batches were committed"
        with services.engine.connect() as c:
            assert c.execute(sa.select(sa.func.count()).select_from(sync_failures)).scalar() == 0
        synchronizer.run_once(account)
        subjects = sorted(r.subject for r in stored_rows(services, account.account_id))
        assert subjects == [f"Stopped {n:02d}" for n in range(20)]
