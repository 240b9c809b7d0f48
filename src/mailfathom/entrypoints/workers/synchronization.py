"""Synchronization workers: one thread per account, push or polling as configured, one per
account reading what its passes stored without sender verdicts or authorship readings, and,
while an embedding profile is active, one for the deployment embedding what they stored."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from mailfathom.bootstrap import Services
from mailfathom.domain.config import AccountConfig


def start_sync_threads(
    services: Services, accounts: Sequence[AccountConfig], stop: threading.Event
) -> list[threading.Thread]:
    synchronizer = services.account_synchronizer()
    workers = [
        threading.Thread(
            target=synchronizer.run_forever,
            args=(account, stop),
            daemon=True,
            name=f"account-{account.account_id}",
        )
        for account in accounts
    ]
    backfill = services.trust_backfill()
    workers += [
        threading.Thread(
            target=backfill.run_forever,
            args=(account, stop),
            daemon=True,
            name=f"trust-{account.account_id}",
        )
        for account in accounts
    ]
    embedding = services.embedding_backfill()
    if embedding is not None:
        workers.append(
            threading.Thread(
                target=embedding.run_forever, args=(stop,), daemon=True, name="embedding"
            )
        )
    for worker in workers:
        worker.start()
    return workers
