"""The lease recheck a pass makes before deleting content (which the store's fence does not
cover): it passes while the worker holds the lease, outside any fence, and refuses once
another worker took the lease over. SQLite and PostgreSQL."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa

from mailfathom.adapters.sql.fencing import StoreFencing
from mailfathom.adapters.sql.lease_recheck import SqlLeaseRecheck
from mailfathom.adapters.sql.work_leases import SqlWorkLeases
from mailfathom.app.sync.lease_ports import LeaseKind
from mailfathom.domain.errors import LeaseLost

LEASE = timedelta(seconds=30)


def test_the_recheck_refuses_once_the_lease_was_taken_over(engine: sa.Engine) -> None:
    leases = SqlWorkLeases(engine)
    leases.offer(LeaseKind.ACCOUNT, ["a"])
    now = datetime.now(UTC)
    (held,) = leases.claim("w1", LeaseKind.ACCOUNT, ["a"], now, now + LEASE, 1)
    recheck = SqlLeaseRecheck(engine)
    fencing = StoreFencing(engine)
    lost = threading.Event()
    recheck.recheck()
    with fencing.fenced("w1", held, lost.set):
        recheck.recheck()
        assert not lost.is_set()
        later = now + 2 * LEASE
        leases.claim("w2", LeaseKind.ACCOUNT, ["a"], later, later + LEASE, 1)
        with pytest.raises(LeaseLost):
            recheck.recheck()
    assert lost.is_set()
    assert leases.holders(LeaseKind.ACCOUNT) == {"a": "w2"}
