"""A pass run once (`mailfathom sync`, the pass `import` runs) whose lease another process
took over stops at its next batch boundary, fetching no more mail, and the command ends with
31007 saying the account's lease was lost. Real Dovecot, on SQLite and PostgreSQL."""

from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
import structlog
from rich.console import Console

from mailfathom.adapters.imap.session import ImapSession
from mailfathom.adapters.sql.engine import create_store_engine, store_url
from mailfathom.adapters.sql.schema import work_leases
from mailfathom.bootstrap import Services
from mailfathom.domain.config import SyncConfig
from mailfathom.domain.errors import LeaseLost
from mailfathom.entrypoints.cli.progress import sync_with_progress
from servers.dovecot import DovecotServer, ImapAccount
from sync.helpers import deployment, imap_account_config, sample
from waiting import wait_for

# Renewed every half second, so the pass hears of a takeover soon.
LEASE_SECONDS = 1.5


def _take_over(url: str, subject: str) -> None:
    """Another process claims the account (through an engine of its own, unfenced)."""
    engine = create_store_engine(url)
    try:
        with engine.begin() as c:
            c.execute(
                sa.update(work_leases)
                .where(work_leases.c.subject == subject)
                .values(
                    holder="intruder",
                    fence=work_leases.c.fence + 1,
                    expires_at=datetime.now(UTC) + timedelta(hours=1),
                )
            )
    finally:
        engine.dispose()


def test_a_one_off_pass_whose_lease_is_taken_over_fetches_no_more_and_says_so(
    tmp_path: Path,
    dovecot: DovecotServer,
    imap_account: ImapAccount,
    database_url: str | None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for n in range(20):
        dovecot.save_message(imap_account.username, sample(f"Taken over {n:02d}"))
    account = imap_account_config(imap_account)
    config = replace(
        deployment(tmp_path, account, database_url),
        sync=SyncConfig(batch_messages=2, lease_seconds=LEASE_SECONDS),
    )
    fetched: list[int] = []
    original = ImapSession.fetch_bodies

    def taken_over_while_fetching(self: ImapSession, uids: list[int]) -> Iterator[object]:
        if not fetched:
            _take_over(store_url(config.store), account.account_id)
            wait_for(
                lambda: any(e["event"] == "leases.lost" for e in logged),
                "the pass's renewal found its lease taken over",
            )
        fetched.extend(uids)
        return original(self, uids)

    monkeypatch.setattr(ImapSession, "fetch_bodies", taken_over_while_fetching)
    with (
        Services.open(config) as services,
        structlog.testing.capture_logs() as logged,
        pytest.raises(LeaseLost) as refused,
    ):
        sync_with_progress(services, account, Console(file=io.StringIO()))
    assert len(fetched) == 2, "mail was fetched after the lease was lost"
    assert refused.value.code == 31007
    assert account.account_id in refused.value.message
    assert "lease was lost" in refused.value.message
