"""What one process's synchronization and embedding count into its metrics, in process, on a
local account: a pass and the messages it stored under the account's configured id, its
duration, and the passages the embedding worker embedded."""

from __future__ import annotations

import threading
from pathlib import Path

from prometheus_client import CollectorRegistry

from cli.operator_cli import local_config
from fakes.embedder import FakeEmbedder
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.bootstrap import Services
from mailfathom.entrypoints.work_metrics import publish_process
from waiting import wait_for

MESSAGES = 10


def test_a_pass_and_the_embedding_worker_are_counted_in_the_process_registry(
    tmp_path: Path,
) -> None:
    registry = CollectorRegistry()
    metrics = publish_process(registry, "sync")
    deployment = load_config(local_config(tmp_path))
    with Services.open(deployment) as services:
        services.work_meter = metrics
        account = deployment.accounts[0].account_id
        services.deliver_sample_mail(account, MESSAGES)
        report = services.account_synchronizer().run_once(deployment.accounts[0])
        written = sum(folder.stored for folder in report.folders)
        assert written > 0
        labels = {"account": account}
        assert registry.get_sample_value("mailfathom_sync_passes_total", labels) == 1
        stored = registry.get_sample_value("mailfathom_sync_messages_stored_total", labels)
        assert stored == written
        assert registry.get_sample_value("mailfathom_sync_pass_seconds_count") == 1
        assert registry.get_sample_value("mailfathom_process_role", {"role": "sync"}) == 1

        services.embedder = FakeEmbedder(dimension=32)
        backfill = services.embedding_backfill()
        assert backfill is not None
        stop = threading.Event()
        worker = threading.Thread(target=backfill.run_forever, args=(stop,), daemon=True)
        worker.start()
        try:
            wait_for(
                lambda: (registry.get_sample_value("mailfathom_embedding_passages_total") or 0) > 0,
                "the embedding worker's passages were not counted",
            )
        finally:
            stop.set()
            worker.join(10)
