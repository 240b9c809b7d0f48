"""A worker's lease rounds have connections of their own on PostgreSQL: the runs of the
accounts it holds may use every connection of the store's pool (one per busy account), and a
round waiting for one of those would renew late, its heartbeat gone stale and its leases lost
to the other workers. Real PostgreSQL."""

from __future__ import annotations

from contextlib import ExitStack
from datetime import timedelta
from pathlib import Path

from mailfathom.adapters.sql.engine import POSTGRESQL_CONNECTIONS
from mailfathom.app.sync.lease_ports import LeaseKind
from mailfathom.bootstrap import Services
from servers.dovecot import ImapAccount
from sync.helpers import deployment, imap_account_config


def test_lease_rounds_go_on_while_the_work_holds_every_pooled_connection(
    tmp_path: Path, migrated_postgres_url: str
) -> None:
    account = imap_account_config(ImapAccount("127.0.0.1", 1, "nobody", "pw"))
    config = deployment(tmp_path, account, migrated_postgres_url)
    with Services.open(config, migrate_schema=False) as services, ExitStack() as held:
        for _ in range(POSTGRESQL_CONNECTIONS):
            held.enter_context(services.engine.connect())
        leases = services.work_leases()
        leases.offer(LeaseKind.ACCOUNT, [account.account_id])
        now = leases.now()
        until = now + timedelta(seconds=30)
        assert leases.beat("w1", now, until) == ["w1"]
        (lease,) = leases.claim("w1", LeaseKind.ACCOUNT, [account.account_id], now, until, 1)
        assert leases.renew("w1", [lease], now, until) == {account.account_id}
