"""Holding one lease for a piece of work done once, such as a synchronization pass run by hand.

A pass carries the account's owner changes; a worker's continuous run carries them too. Both at
once could each send the same command (two COPYs of one move), so the pass takes the account's
lease as a worker would: it is refused with `LeaseHeld` while another worker holds it, renews
it every third of the period while it runs, writes under its fence and gives it up at the end.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from datetime import timedelta

import structlog

from mailfathom.app.shared.context_threads import context_thread
from mailfathom.app.sync.lease_loop import ROUNDS_PER_LEASE
from mailfathom.app.sync.lease_ports import Fencing, Lease, LeaseKind, WorkLeases
from mailfathom.domain.errors import LeaseHeld

log = structlog.get_logger("mailfathom.leases")


@contextlib.contextmanager
def holding(
    leases: WorkLeases,
    fencing: Fencing,
    kind: LeaseKind,
    subject: str,
    *,
    worker: str,
    lease_seconds: float,
) -> Iterator[threading.Event]:
    """Hold the lease on `subject` while inside; yields the event set once the lease is lost
    (every write after that is refused by the fence)."""
    period = timedelta(seconds=lease_seconds)
    leases.offer(kind, [subject])
    now = leases.now()
    claimed = leases.claim(worker, kind, [subject], now, now + period, 1)
    if not claimed:
        raise LeaseHeld("Another worker holds the lease of this work; nothing was done.")
    lease = claimed[0]
    log.info("leases.claimed", kind=kind.value, subject=subject, fence=lease.fence, worker=worker)
    lost = threading.Event()
    done = threading.Event()
    renewing = context_thread(
        _renew, leases, worker, lease, period, done, lost, name=f"lease-{subject}"
    )
    renewing.start()
    try:
        with fencing.fenced(worker, lease, lost.set):
            yield lost
    finally:
        done.set()
        renewing.join()
        try:
            leases.release(worker, [lease])
        except Exception as error:  # it expires instead
            log.warning("leases.release_failed", error=type(error).__name__)


def _renew(
    leases: WorkLeases,
    worker: str,
    lease: Lease,
    period: timedelta,
    done: threading.Event,
    lost: threading.Event,
) -> None:
    while not done.wait(period.total_seconds() / ROUNDS_PER_LEASE):
        try:
            now = leases.now()
            kept = leases.renew(worker, [lease], now, now + period)
        except Exception as error:  # tried again next round; the fence guards the writes
            log.warning("leases.round_failed", worker=worker, error=type(error).__name__)
            continue
        if lease.subject not in kept:
            log.warning("leases.lost", kind=lease.kind.value, subject=lease.subject)
            lost.set()
            return
