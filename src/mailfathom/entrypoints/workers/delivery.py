"""The delivery worker: run the delivery pass until told to stop.

A pass that found work runs again at once; an idle one waits `interval` seconds, or less when
a queued send (one held by the deployment's hold, by a retry's backoff, or by the instant
send_draft was asked to wait for) becomes due sooner, so it leaves at its instant rather than
at the next poll. The wait never drops below `_SHORTEST`: a send reported due that another
worker took is not polled for in a tight loop. Several
workers (processes or machines sharing a PostgreSQL store) may run together: a send is taken
by one claim, under a lease.
"""

from __future__ import annotations

import ssl
import threading
from collections.abc import Callable

import structlog

from mailfathom.app.sending.deliver_outgoing import PassReport
from mailfathom.bootstrap import Services
from mailfathom.domain.config import DeploymentConfig

log = structlog.get_logger("mailfathom.delivery")
_SHORTEST = 0.05


def sending_configured(config: DeploymentConfig) -> bool:
    """Whether any account may send at all (and the deployment is not read-only)."""
    return not config.read_only and any(
        a.delivery is not None and a.delivery.enabled for a in config.accounts
    )


def run_delivery(
    services: Services,
    stop: threading.Event,
    *,
    interval: float = 5.0,
    tls_context: Callable[[], ssl.SSLContext] = ssl.create_default_context,
    delivered: Callable[[PassReport], None] | None = None,
) -> None:
    """Run passes until `stop` is set; each pass's report goes to `delivered` (the process's
    metrics) where given."""
    delivery = services.delivery_pass(tls_context=tls_context)
    log.info("delivery.started", worker=delivery.worker)
    while not stop.is_set():
        try:
            report = delivery.run_once(stop=stop)
        except Exception as failure:
            log.error("delivery.pass_failed", error_type=type(failure).__name__)
            stop.wait(interval)
            continue
        if delivered is not None:
            delivered(report)
        if report.claimed == 0:
            stop.wait(idle_wait(interval, report.due_in))


def idle_wait(interval: float, due_in: float | None) -> float:
    """How long an idle worker waits: the poll interval, or until the earliest queued send
    is due when that comes first."""
    if due_in is None:
        return interval
    return min(interval, max(due_in, _SHORTEST))
