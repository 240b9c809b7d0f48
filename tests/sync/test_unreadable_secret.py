"""A continuous synchronization whose IMAP secret cannot be read (a variable unset, a file
removed after start) says so, naming the account, and keeps trying: the account catches up
once the secret is back, without a restart."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import structlog

from mailfathom.domain.config import SyncMode
from servers.dovecot import ImapAccount

from .helpers import RemoteMailbox, imap_account_config, open_services, sample, stored_rows


def _wait_for(condition: Callable[[], Any], what: str, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


@pytest.mark.parametrize("mode", [SyncMode.PUSH, SyncMode.POLLING])
def test_a_continuous_sync_outlives_an_unreadable_secret_and_recovers(
    tmp_path: Path, imap_account: ImapAccount, monkeypatch: pytest.MonkeyPatch, mode: SyncMode
) -> None:
    account = imap_account_config(imap_account, sync_mode=mode, poll_interval_seconds=1)
    assert account.imap is not None
    assert account.imap.secret is not None
    assert account.imap.secret.env is not None
    variable = account.imap.secret.env
    monkeypatch.delenv(variable)
    remote = RemoteMailbox(imap_account)
    try:
        remote.append(sample("Waiting for the secret"))
    finally:
        remote.close()
    with open_services(tmp_path, account) as services, structlog.testing.capture_logs() as logs:
        stop = threading.Event()
        worker = threading.Thread(
            target=services.account_synchronizer().run_forever, args=(account, stop), daemon=True
        )
        worker.start()
        try:
            _wait_for(
                lambda: any(e["event"] == "account.secret_not_readable" for e in logs),
                "the unreadable secret was not reported",
            )
            assert worker.is_alive()
            (event, *_) = [e for e in logs if e["event"] == "account.secret_not_readable"]
            assert event["account"] == account.account_id
            assert event["error_code"] == 11002
            monkeypatch.setenv(variable, imap_account.password)
            _wait_for(
                lambda: len(stored_rows(services, account.account_id)) == 1,
                "the account did not catch up once the secret was back",
            )
        finally:
            stop.set()
            worker.join(timeout=60)
        assert not worker.is_alive()
