"""Synchronization workers: one thread per account, push or polling as configured, one per
account reading what its passes stored without sender verdicts or authorship readings, and,
while an embedding profile is active, one for the deployment embedding what they stored.

Every account's work runs under its lease: a lease loop claims this process's share of the
accounts and runs the same work for each account it holds, under the lease's fence
(`start_leased_sync`); the embedding worker runs only while this process holds the
deployment's embedding lease. So a pass run by hand (`sync`, `import`), which takes the
account's lease too, is refused while a continuous process holds the account, on SQLite as on
PostgreSQL: two carriers of one owner change could each send its command.

On PostgreSQL a fleet shares the accounts, and a starting process waits a round to count the
others before claiming. On SQLite one process synchronizes (`serve --processes` and
`worker --role sync` refuse it), so it claims in its first round and starts as soon as it did
before it took leases.
"""

from __future__ import annotations

import os
import socket
import threading
import uuid
from collections.abc import Sequence
from contextlib import AbstractContextManager

from mailfathom.app.shared.context_threads import context_thread
from mailfathom.app.sync.lease_hold import holding
from mailfathom.app.sync.lease_loop import ROUNDS_PER_LEASE, LeaseLoop, LeaseWork
from mailfathom.app.sync.lease_ports import LeaseKind
from mailfathom.app.sync.synchronize_account import IDLE_SLICE
from mailfathom.bootstrap import Services
from mailfathom.domain.codes import CommandCode
from mailfathom.domain.config import AccountConfig
from mailfathom.domain.errors import ConfigurationError

EMBEDDING_LEASE = "embedding"


def shares_store(services: Services) -> bool:
    """Whether processes of a fleet may work on this store (PostgreSQL), splitting the
    accounts among them; on SQLite one process synchronizes them all."""
    return services.engine.dialect.name == "postgresql"


# The lease rows' `holder` and `worker_id` columns hold this many characters.
WORKER_ID_LIMIT = 128


def worker_id(given: str | None = None) -> str:
    """This process's name in the lease rows: `given`, or the host, process id and a few
    random characters (a restarted process is a new worker). A given name the rows cannot
    hold is refused (11045): every heartbeat and claim under it would fail."""
    if given is not None:
        if not 0 < len(given) <= WORKER_ID_LIMIT or not given.isprintable():
            raise ConfigurationError(
                f"--id takes 1 to {WORKER_ID_LIMIT} printable characters.",
                code=int(CommandCode.WORKER_ID_NOT_USABLE),
            )
        return given
    host = socket.gethostname()[: WORKER_ID_LIMIT - 32]
    return f"{host}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


def start_sync_threads(
    services: Services,
    accounts: Sequence[AccountConfig],
    stop: threading.Event,
    *,
    worker: str | None = None,
) -> list[threading.Thread]:
    """Synchronize `accounts` under their leases until `stop` is set (`serve`, `sync
    --continuous`); on SQLite the accounts are claimed in the first round."""
    return start_leased_sync(
        services, accounts, stop, worker_id(worker), settle=shares_store(services)
    )


def holding_account(
    services: Services, account: AccountConfig
) -> AbstractContextManager[threading.Event]:
    """The account's lease for a pass run once (`sync`, `import`): refused with `LeaseHeld`
    while a worker holds it, so a pass and a worker never carry the same changes at once."""
    return holding(
        services.work_leases(),
        services.fencing(),
        LeaseKind.ACCOUNT,
        account.account_id,
        worker=worker_id(),
        lease_seconds=services.config.sync.lease_seconds,
    )


def start_leased_sync(
    services: Services,
    accounts: Sequence[AccountConfig],
    stop: threading.Event,
    worker: str,
    *,
    embedding: bool = True,
    settle: bool = True,
) -> list[threading.Thread]:
    """Claim this worker's share of `accounts` and synchronize those (and, when `embedding`
    and a profile is active, embed while holding the deployment's embedding lease).
    `settle`: wait a round before claiming, so workers started together split the accounts
    once (see `LeaseLoop`)."""
    lease_seconds = services.config.sync.lease_seconds
    synchronizer = services.account_synchronizer(
        idle_slice=min(IDLE_SLICE, lease_seconds / ROUNDS_PER_LEASE)
    )
    backfill = services.trust_backfill()
    by_id = {a.account_id: a for a in accounts}

    def run_account(subject: str, held: threading.Event) -> None:
        account = by_id[subject]
        parts = [
            context_thread(synchronizer.run_forever, account, held, name=f"account-{subject}"),
            context_thread(backfill.run_forever, account, held, name=f"trust-{subject}"),
        ]
        for part in parts:
            part.start()
        for part in parts:
            part.join()

    loops = [LeaseWork(LeaseKind.ACCOUNT, list(by_id), run_account, fair=True)] if by_id else []
    if embedding:
        loops += embedding_lease_work(services)
    return _start_loops(services, loops, stop, worker, settle=settle)


def embedding_lease_work(services: Services) -> list[LeaseWork]:
    """The deployment's embedding worker as leased work (none without an active profile):
    one process at a time embeds, so no passage is embedded twice."""
    backfill = services.embedding_backfill()
    if backfill is None:
        return []

    def run_embedding(_subject: str, held: threading.Event) -> None:
        backfill.run_forever(held)

    return [LeaseWork(LeaseKind.DEPLOYMENT, [EMBEDDING_LEASE], run_embedding, fair=False)]


def _start_loops(
    services: Services,
    works: Sequence[LeaseWork],
    stop: threading.Event,
    worker: str,
    *,
    settle: bool = True,
) -> list[threading.Thread]:
    threads = []
    for work in works:
        loop = LeaseLoop(
            services.work_leases(),
            services.fencing(),
            work,
            worker=worker,
            lease_seconds=services.config.sync.lease_seconds,
            settle=settle,
        )
        # The embedding loop keeps the name the unleased embedding thread has.
        name = EMBEDDING_LEASE if work.kind is LeaseKind.DEPLOYMENT else "account-leases"
        thread = threading.Thread(target=loop.run, args=(stop,), daemon=True, name=name)
        thread.start()
        threads.append(thread)
    return threads


def start_leased_embedding(
    services: Services, stop: threading.Event, worker: str
) -> list[threading.Thread]:
    """The embedding role alone: embed while holding the deployment's embedding lease."""
    return _start_loops(services, embedding_lease_work(services), stop, worker)
