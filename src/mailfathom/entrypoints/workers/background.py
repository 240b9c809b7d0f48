"""The work a serving process does beside answering calls: keeping accounts synchronized,
delivering queued sends, and asking a failed embedding provider again.

What runs is settled from the configuration and the command's flags before anything starts
(`plan_background`), so a command can check the secrets that work needs and say what it is
about to do; `start_background` then starts it, and `BackgroundWork.close` stops it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import structlog

from mailfathom.app.shared.query_placement import QueryPlacement
from mailfathom.app.sync.lease_loop import STOP_SECONDS as LEASE_STOP_SECONDS
from mailfathom.bootstrap import (
    NeededSecret,
    Services,
    secrets_to_deliver,
    secrets_to_synchronize,
)
from mailfathom.domain.config import AccountConfig, DeploymentConfig
from mailfathom.entrypoints.work_metrics import WorkMetrics
from mailfathom.entrypoints.workers.delivery import run_delivery, sending_configured
from mailfathom.entrypoints.workers.synchronization import start_sync_threads

log = structlog.get_logger("mailfathom.serve")

# What stopping a lease loop takes beyond its wait for the work of its leases: leaving the
# fleet and giving the leases back, a few short statements.
GIVE_BACK_SECONDS = 10.0
# How long stopping waits for the workers to finish what they are doing, in all: it covers
# the lease loops' own bound, so a stopping process always gives its leases back and leaves
# the fleet before it exits. A synchronization pass or an SMTP session still running after
# it is abandoned: each is safe to cut short (batches commit whole, a pass's writes after its
# lease was given back are refused by the fence, and a send that was being handed over ends
# as an unknown outcome).
STOP_SECONDS = LEASE_STOP_SECONDS + GIVE_BACK_SECONDS
# How often the re-check of a failed embedding provider looks whether its window has passed.
RECHECK_POLL_SECONDS = 1.0


@dataclass(frozen=True, slots=True)
class BackgroundPlan:
    """Which accounts are synchronized and whether sends are delivered, and if not, why."""

    accounts: tuple[AccountConfig, ...]
    delivering: bool
    sync_off_reason: str | None = None
    delivery_off_reason: str | None = None
    secrets: tuple[NeededSecret, ...] = ()

    @property
    def synchronizing(self) -> list[str]:
        return [a.account_id for a in self.accounts]


def plan_background(config: DeploymentConfig, *, sync: bool, deliver: bool) -> BackgroundPlan:
    accounts: tuple[AccountConfig, ...] = ()
    sync_off: str | None = None
    if not sync:
        sync_off = "--no-sync"
    elif not config.sync.enabled:
        sync_off = "Sync.Enabled is false"
    elif not config.accounts:
        sync_off = "no account is configured"
    else:
        accounts = config.accounts
    delivery_off: str | None = None
    if not deliver:
        delivery_off = "--no-deliver"
    elif not sending_configured(config):
        delivery_off = "no account may send"
    delivering = delivery_off is None
    needed = secrets_to_synchronize(accounts)
    if delivering:
        needed += secrets_to_deliver(config)
    return BackgroundPlan(accounts, delivering, sync_off, delivery_off, tuple(needed))


@dataclass
class BackgroundWork:
    plan: BackgroundPlan
    stop: threading.Event = field(default_factory=threading.Event)
    threads: list[threading.Thread] = field(default_factory=list)

    def close(self, timeout: float = STOP_SECONDS) -> None:
        """Tell every worker to stop and wait for them, up to `timeout` in all."""
        self.stop.set()
        wait_stopped(self.threads, timeout)


def wait_stopped(threads: Sequence[threading.Thread], timeout: float = STOP_SECONDS) -> None:
    """Wait for `threads`, told to stop, up to `timeout` in all (one deadline, however many
    there are); those still running are named in a log line and left behind."""
    deadline = time.monotonic() + timeout
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    still = [t.name for t in threads if t.is_alive()]
    if still:
        log.warning("serve.workers_abandoned", workers=still)


def start_background(
    services: Services, plan: BackgroundPlan, metrics: WorkMetrics | None = None
) -> BackgroundWork:
    """Start the planned work; where `metrics` is given, what it does is counted there."""
    work = BackgroundWork(plan)
    if metrics is not None:
        services.work_meter = metrics
    if plan.accounts:
        work.threads += start_sync_threads(services, plan.accounts, work.stop)
    if plan.delivering:
        thread = threading.Thread(
            target=run_delivery,
            args=(services, work.stop),
            kwargs={"delivered": metrics.delivered if metrics is not None else None},
            daemon=True,
            name="delivery",
        )
        thread.start()
        work.threads.append(thread)
    placement = services.query_placement()
    if placement.embedder is not None:
        thread = threading.Thread(
            target=recheck_provider,
            args=(placement, work.stop),
            daemon=True,
            name="embedding-recheck",
        )
        thread.start()
        work.threads.append(thread)
    return work


def recheck_provider(
    placement: QueryPlacement, stop: threading.Event, every: float = RECHECK_POLL_SECONDS
) -> None:
    """Ask a failed embedding provider again as soon as its window allows (see
    `QueryPlacement.recheck`), until `stop` is set."""
    while not stop.wait(every):
        try:
            placement.recheck()
        except Exception as error:
            log.warning("serve.embedding_recheck_failed", error=type(error).__name__)
