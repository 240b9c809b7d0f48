"""The pass `mailfathom import` runs after filing its mail, refused because the account's
lease is held, says what becomes of the mail as it is: a continuous worker (here the one
`serve` and `sync --continuous` run) stores it; a pass run once (`sync`, another `import`)
may already have read the folder, so the import waits for it a few lease periods and runs
its own pass, or ends with 31008 saying `mailfathom sync` stores the mail afterwards.
Real lease rows, on SQLite and PostgreSQL."""

from __future__ import annotations

import io
import mailbox
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from rich.console import Console

from log_audit import register_headers
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.adapters.local.sample_mail import generate_mailbox
from mailfathom.adapters.sql.schema import messages
from mailfathom.bootstrap import Services
from mailfathom.domain.config import AccountConfig
from mailfathom.domain.errors import LeaseHeld
from mailfathom.entrypoints.cli.importing import import_into_local, synchronize_imported
from mailfathom.entrypoints.workers.background import wait_stopped
from mailfathom.entrypoints.workers.synchronization import holding_account, start_sync_threads
from sync.workers import holders
from waiting import wait_for

# The shortest lease the configuration takes: the import waits a few of them at most.
LEASE_SECONDS = 1


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def services(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Services]:
    """A deployment with one local account, `notes`, on SQLite or PostgreSQL."""
    store = f'[Store]\nDataDir = "{tmp_path / "data"}"\n'
    if request.param == "postgresql":
        store += f'DatabaseUrl = "{request.getfixturevalue("migrated_postgres_url")}"\n'
    config = tmp_path / "mailfathom.toml"
    config.write_text(
        f"{store}\n[Sync]\nLeaseSeconds = {LEASE_SECONDS}\n\n"
        '[[Accounts]]\nId = "notes"\nKind = "local"\n'
        '[[Accounts.Folders]]\nRemote = "INBOX"\nRole = "Inbox"\n',
        "utf-8",
    )
    with Services.open(load_config(config)) as opened:
        yield opened


def _filed(services: Services, tmp_path: Path) -> AccountConfig:
    """Three messages filed into `notes` as `import` files them, not yet stored."""
    source = tmp_path / "saved.mbox"
    box = mailbox.mbox(source)
    for sample in generate_mailbox(3, seed=11, max_octets=4000, junk_folder=None):
        register_headers(sample.raw)
        box.add(mailbox.mboxMessage(sample.raw))
    box.close()
    assert import_into_local(services, "notes", "INBOX", source).added == 3
    (account,) = services.config.accounts
    return account


def _stored(services: Services) -> int:
    with services.engine.connect() as c:
        return int(c.execute(sa.select(sa.func.count()).select_from(messages)).scalar_one())


class _Importing:
    """`synchronize_imported` on a thread of its own, its console kept."""

    def __init__(self, services: Services, account: AccountConfig) -> None:
        self._out = io.StringIO()
        self.failure: BaseException | None = None
        console = Console(file=self._out, markup=False, highlight=False, width=400)
        self._thread = threading.Thread(target=self._run, args=(services, account, console))
        self._thread.start()

    def _run(self, services: Services, account: AccountConfig, console: Console) -> None:
        try:
            synchronize_imported(services, account, console)
        except BaseException as error:
            self.failure = error

    def said(self) -> str:
        return self._out.getvalue()

    def ended(self) -> bool:
        self._thread.join(120)
        return not self._thread.is_alive()


def test_beside_a_continuous_worker_the_import_leaves_its_mail_to_that_worker(
    services: Services, tmp_path: Path
) -> None:
    (account,) = services.config.accounts
    stop = threading.Event()
    workers = start_sync_threads(services, [account], stop)
    try:
        wait_for(lambda: holders(services.engine).get("notes"), "the worker holds the account")
        account = _filed(services, tmp_path)
        importing = _Importing(services, account)
        assert importing.ended()
        assert importing.failure is None
        assert "synchronizes this account and stores the imported mail" in importing.said()
        assert "waiting" not in importing.said()
        wait_for(lambda: _stored(services) == 3, "the worker stored the imported mail")
    finally:
        stop.set()
        wait_stopped(workers)


def test_beside_a_one_off_pass_the_import_waits_for_it_and_stores_its_mail(
    services: Services, tmp_path: Path
) -> None:
    account = _filed(services, tmp_path)
    with holding_account(services, account):
        importing = _Importing(services, account)
        wait_for(lambda: "waiting" in importing.said(), "the import waits for the other pass")
        assert _stored(services) == 0
    assert importing.ended()
    assert importing.failure is None
    assert _stored(services) == 3
    assert "stores the imported mail" not in importing.said()


def test_beside_a_one_off_pass_that_outlasts_the_wait_the_import_says_to_sync_afterwards(
    services: Services, tmp_path: Path
) -> None:
    account = _filed(services, tmp_path)
    with holding_account(services, account):
        importing = _Importing(services, account)
        assert importing.ended()
    assert isinstance(importing.failure, LeaseHeld)
    assert importing.failure.code == 31008
    assert "Another pass" in importing.failure.message
    assert "mailfathom sync -a notes" in importing.failure.message
    assert "a running process" not in importing.said()
    assert _stored(services) == 0
