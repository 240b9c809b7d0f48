"""What one process publishes of its own work on `/metrics`: synchronization passes,
delivery, embedding, and the process itself (its role, and the standard process metrics:
start time, CPU, memory, open descriptors).

Every process publishes its own figures; nothing is summed across processes here (a
scraper sums them). Labels are this project's own words and the configured account id: an
operator's name for an account, checked against `text_rules.ACCOUNT_IDENTIFIER` (no `@`, so
never an address), already in every log line, and bounded by the configuration. Folder
names, addresses, subjects and query text are never labels. The account id labels the
counters only; the pass duration is one histogram for the process, so its series do not
multiply by the number of accounts.
"""

from __future__ import annotations

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    PlatformCollector,
    ProcessCollector,
)

from mailfathom.app.sending.deliver_outgoing import PassReport

DELIVERY_OUTCOMES = ("sent", "failed", "retried", "lease_lost")


class WorkMetrics:
    """The `WorkMeter` a process's synchronization and embedding count into, and what its
    delivery passes did, in `registry`."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.passes = Counter(
            "mailfathom_sync_passes",
            "Synchronization passes that ended, by account (over every folder when "
            "polling, over one folder when watched).",
            ["account"],
            registry=registry,
        )
        self.stored = Counter(
            "mailfathom_sync_messages_stored",
            "Messages synchronization passes stored, by account.",
            ["account"],
            registry=registry,
        )
        self.failures = Counter(
            "mailfathom_sync_pass_failures",
            "Synchronization passes (or the sessions they needed) that stopped on a "
            "failure, by account and the failure's code.",
            ["account", "code"],
            registry=registry,
        )
        self.seconds = Histogram(
            "mailfathom_sync_pass_seconds",
            "How long synchronization passes that ended took.",
            registry=registry,
            buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0),
        )
        self.claimed = Counter(
            "mailfathom_delivery_claimed",
            "Queued sends the delivery passes of this process claimed.",
            registry=registry,
        )
        self.outcomes = Counter(
            "mailfathom_delivery_outcomes",
            "Claimed sends by what became of them: sent, failed for good, queued again "
            "(retried), or lease_lost (the outcome could not be written under this "
            "process's lease; another worker takes the send over).",
            ["outcome"],
            registry=registry,
        )
        for outcome in DELIVERY_OUTCOMES:
            self.outcomes.labels(outcome)
        self.passages = Counter(
            "mailfathom_embedding_passages",
            "Passages the embedding worker of this process embedded.",
            registry=registry,
        )

    def pass_ended(self, account_id: str, stored: int, seconds: float) -> None:
        self.passes.labels(account_id).inc()
        self.stored.labels(account_id).inc(stored)
        self.seconds.observe(seconds)

    def pass_failed(self, account_id: str, code: int) -> None:
        self.failures.labels(account_id, str(code)).inc()

    def passages_embedded(self, count: int) -> None:
        self.passages.inc(count)

    def delivered(self, report: PassReport) -> None:
        self.claimed.inc(report.claimed)
        for outcome, count in zip(
            DELIVERY_OUTCOMES,
            (report.sent, report.failed, report.retried, report.lease_lost),
            strict=True,
        ):
            self.outcomes.labels(outcome).inc(count)


def publish_process(registry: CollectorRegistry, *roles: str) -> WorkMetrics:
    """Register the process's own metrics in `registry` (its roles, and prometheus' process
    and platform collectors) and the counters of its work, which it returns."""
    info = Gauge(
        "mailfathom_process_role",
        "1 for each role this process runs (serve, or a worker's roles).",
        ["role"],
        registry=registry,
    )
    for role in roles:
        info.labels(role).set(1)
    ProcessCollector(registry=registry)
    PlatformCollector(registry=registry)
    return WorkMetrics(registry)
