"""A continuous synchronization stopped while a pass hangs still gives its leases back and
leaves the fleet before the process ends: other machines claim its accounts at once and count
it gone, instead of waiting out a long lease with a dead member among the workers."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from mailfathom.adapters.sql.engine import create_store_engine
from mailfathom.adapters.sql.schema import lease_workers
from servers.dovecot import DovecotServer
from servers.stalling_relay import StallingRelay
from sync.workers import holders, kill, start_continuous_sync, stop, write_config
from waiting import wait_for

pytestmark = [pytest.mark.timeout(300)]

# Longer than a stopping process waits: the lease would outlive the process. (The first
# claim comes a round, a third of it, after the start.)
LONG_LEASE_SECONDS = 90


@pytest.fixture
def engine(migrated_postgres_url: str) -> Iterator[sa.Engine]:
    created = create_store_engine(migrated_postgres_url)
    yield created
    created.dispose()


def _workers(engine: sa.Engine) -> list[str]:
    with engine.connect() as c:
        return [str(w) for w in c.execute(sa.select(lease_workers.c.worker_id)).scalars()]


def test_a_continuous_sync_stopped_during_a_hanging_pass_gives_its_lease_back(
    tmp_path: Path, dovecot: DovecotServer, engine: sa.Engine, migrated_postgres_url: str
) -> None:
    account = dovecot.add_user(f"hang-{id(dovecot) % 997}", "pw-hang")
    # The folder check at start is relayed; the pass's own connection then waits for a
    # greeting that never comes, far longer than the process waits when stopped.
    with StallingRelay(account.host, account.port, passed=1) as relay:
        relayed = dataclasses.replace(account, host=relay.host, port=relay.port)
        config = write_config(
            tmp_path, migrated_postgres_url, [relayed], lease_seconds=LONG_LEASE_SECONDS
        )
        text = config.read_text("utf-8").replace(
            'Tls = "none"', 'Tls = "none"\nTimeoutSeconds = 3600'
        )
        config.write_text(text, "utf-8")
        process = start_continuous_sync(config)
        try:
            wait_for(
                lambda: holders(engine).get("a0") is not None,
                "the account claimed",
                timeout=LONG_LEASE_SECONDS,
            )
            wait_for(lambda: relay.stalled > 0, "the pass waiting on its server")
            assert len(_workers(engine)) == 1
            assert stop(process, timeout=200) == 0
        finally:
            kill(process)
    assert holders(engine) == {"a0": None}
    assert _workers(engine) == []
