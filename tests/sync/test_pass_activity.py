"""The embedding worker starts no batch while a synchronization pass of its process runs,
and resumes when the pass ends."""

from __future__ import annotations

import threading
from pathlib import Path

from cli.operator_cli import local_config
from fakes.embedder import FakeEmbedder
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.app.sync.pass_activity import PassActivity
from mailfathom.bootstrap import Services
from waiting import wait_for


def test_waiting_for_idle_returns_once_every_pass_has_ended() -> None:
    activity = PassActivity()
    stop = threading.Event()
    with activity.running():
        with activity.running():
            waiter = threading.Thread(target=activity.wait_idle, args=(stop, 0.05))
            waiter.start()
        waiter.join(0.3)
        assert waiter.is_alive()
        assert activity.busy()
    waiter.join(5)
    assert not waiter.is_alive()
    assert not activity.busy()


def test_waiting_for_idle_ends_when_told_to_stop() -> None:
    activity = PassActivity()
    stop = threading.Event()
    with activity.running():
        waiter = threading.Thread(target=activity.wait_idle, args=(stop, 0.05))
        waiter.start()
        stop.set()
        waiter.join(5)
        assert not waiter.is_alive()


def test_the_worker_embeds_nothing_while_a_pass_runs(tmp_path: Path) -> None:
    deployment = load_config(local_config(tmp_path))
    with Services.open(deployment) as services:
        account = deployment.accounts[0]
        services.deliver_sample_mail(account.account_id, 10)
        services.account_synchronizer().run_once(account)
        embedder = FakeEmbedder(dimension=32)
        services.embedder = embedder
        backfill = services.embedding_backfill()
        assert backfill is not None
        stop = threading.Event()
        with services.pass_activity.running():
            worker = threading.Thread(target=backfill.run_forever, args=(stop,), daemon=True)
            worker.start()
            worker.join(0.5)
            assert embedder.batches == []
        try:
            wait_for(lambda: embedder.batches, "the worker embedded once the pass ended")
        finally:
            stop.set()
            worker.join(10)
        assert not worker.is_alive()


def test_a_pass_holds_the_activity_while_it_runs(tmp_path: Path) -> None:
    deployment = load_config(local_config(tmp_path))
    with Services.open(deployment) as services:
        account = deployment.accounts[0]
        services.deliver_sample_mail(account.account_id, 3)
        seen: list[bool] = []
        services.account_synchronizer().run_once(
            account, on_folder=lambda _: seen.append(services.pass_activity.busy())
        )
        assert seen
        assert all(seen)
        assert not services.pass_activity.busy()
