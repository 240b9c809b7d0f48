"""The store contract runs on every backend: the embedded SQLite file and PostgreSQL, and
the in-memory fakes of the ports (`backend`), so a fake passes what the adapters pass."""

from __future__ import annotations

import inspect
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
import sqlalchemy as sa

from fakes.answering import MemoryChatHealth, MemoryLedger
from fakes.store import MemoryStore
from mailfathom.adapters.processes import MachineProcesses, this_machine
from mailfathom.adapters.sql import migrate
from mailfathom.adapters.sql.answering import SqlAnsweringLedger, SqlChatHealth
from mailfathom.adapters.sql.contacts import SqlContactBook
from mailfathom.adapters.sql.conversation_store import SqlConversationStore
from mailfathom.adapters.sql.drafts import SqlDraftStore
from mailfathom.adapters.sql.engine import create_store_engine, sqlite_url
from mailfathom.adapters.sql.folder_creation_admin import SqlFolderCreationRecords
from mailfathom.adapters.sql.folder_creations import SqlFolderCreations
from mailfathom.adapters.sql.mutation_admin import SqlMutationRecords
from mailfathom.adapters.sql.mutations import SqlMutationStore
from mailfathom.adapters.sql.organizing import SqlOrganizeStore
from mailfathom.adapters.sql.outbox import SqlOutbox
from mailfathom.adapters.sql.owner_alerts import SqlOwnerAlerts
from mailfathom.adapters.sql.reading import SqlMailboxReader
from mailfathom.adapters.sql.schema import contact_addresses, contacts
from mailfathom.adapters.sql.sync_store import SqlSyncStore
from mailfathom.app.confirmation.ports import OwnerAlerts
from mailfathom.app.contacts.ports import ContactBook
from mailfathom.app.drafting.ports import DraftStore
from mailfathom.app.flags.ports import FolderCreationRecords, MutationRecords
from mailfathom.app.organize.ports import OrganizeStore
from mailfathom.app.sending.ports import OutboxStore
from mailfathom.app.shared.stored_mail_ports import FolderDirectory

from .account_scope import account_scope_checked
from .held_mail import Creations, HeldMail, Mutations, SqlHeldMail

SQL_BACKENDS = [
    "sqlite",
    pytest.param("postgresql", marks=pytest.mark.postgres),
    pytest.param("partitioned", marks=pytest.mark.postgres),
]
BACKENDS = [*SQL_BACKENDS, "memory"]


@contextmanager
def _migrated(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[sa.Engine]:
    if kind == "sqlite":
        url = sqlite_url(tmp_path / "store.sqlite3")
    elif kind == "partitioned":
        url = request.getfixturevalue("partitioned_postgres_url")
    else:
        url = request.getfixturevalue("migrated_postgres_url")
    created = create_store_engine(url)
    migrate.upgrade(created)  # a copy of the migrated template on PostgreSQL: nothing to do
    try:
        yield created
    finally:
        created.dispose()


@pytest.fixture(params=SQL_BACKENDS)
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[sa.Engine]:
    with _migrated(request.param, request, tmp_path) as created:
        yield created


@dataclass(frozen=True)
class Backend:
    """The ports of one store: the SQL adapters over one migrated database, or the fakes
    of one `MemoryStore`. Ports asked of one backend share its rows."""

    name: str
    engine: sa.Engine | None = None
    memory: MemoryStore | None = None

    def _sql(self) -> sa.Engine:
        assert self.engine is not None
        return self.engine

    def outbox(self) -> OutboxStore:
        return self.memory.outbox if self.memory else SqlOutbox(self._sql())

    def drafts(self) -> DraftStore:
        return self.memory.drafts if self.memory else SqlDraftStore(self._sql())

    def alerts(self) -> OwnerAlerts:
        return self.memory.alerts if self.memory else SqlOwnerAlerts(self._sql())

    def contacts(self) -> ContactBook:
        return self.memory.contacts if self.memory else SqlContactBook(self._sql())

    def held_mail(self) -> HeldMail:
        """Where a test stores mail the way synchronization does."""
        return self.memory.local if self.memory else SqlHeldMail(self._sql())

    def folders(self) -> FolderDirectory:
        return self.memory.local if self.memory else SqlMailboxReader(self._sql())

    def mutations(self) -> Mutations:
        return self.memory.mutations if self.memory else SqlMutationStore(self._sql())

    def mutation_records(self) -> MutationRecords:
        return self.memory.mutations if self.memory else SqlMutationRecords(self._sql())

    def organize(self) -> OrganizeStore:
        return self.memory.mutations if self.memory else SqlOrganizeStore(self._sql())

    def folder_creations(self) -> Creations:
        return self.memory.creations if self.memory else SqlFolderCreations(self._sql())

    def creation_records(self) -> FolderCreationRecords:
        return self.memory.creations if self.memory else SqlFolderCreationRecords(self._sql())

    def answering_ledger(self) -> SqlAnsweringLedger | MemoryLedger:
        return self.memory.answering_ledger if self.memory else SqlAnsweringLedger(self._sql())

    def chat_health(self) -> SqlChatHealth | MemoryChatHealth:
        return self.memory.chat_health if self.memory else SqlChatHealth(self._sql())

    def contact_rows(self) -> tuple[int, int]:
        """(contact records, address rows) as the store holds them."""
        if self.memory:
            return self.memory.contacts.row_counts()
        with self._sql().connect() as c:
            people = c.execute(sa.select(sa.func.count()).select_from(contacts)).scalar_one()
            held = c.execute(sa.select(sa.func.count()).select_from(contact_addresses))
            return int(people), int(held.scalar_one())


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    if request.param == "memory":
        yield Backend("memory", memory=MemoryStore())
        return
    with _migrated(request.param, request, tmp_path) as created:
        yield Backend(request.param, engine=created)


@pytest.fixture
def store(engine: sa.Engine) -> SqlSyncStore:
    return SqlSyncStore(engine)


@pytest.fixture
def conversations(engine: sa.Engine) -> SqlConversationStore:
    return SqlConversationStore(engine)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A partitioned store cannot go below the revision whose column it is partitioned by
    (test_partitioned_store.py holds that refusal), so the tests that migrate down run on
    the two unpartitioned stores."""
    dropped = [item for item in items if _goes_down_partitioned(item)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if item not in dropped]


def _goes_down_partitioned(item: pytest.Item) -> bool:
    spec = getattr(item, "callspec", None)
    if spec is None or "partitioned" not in spec.params.values():
        return False
    function = getattr(item, "function", None)
    return function is not None and "downgrade(" in inspect.getsource(function)


@pytest.fixture(autouse=True)
def _account_scoped() -> Iterator[None]:
    """Every store test runs under the account-scope check (account_scope.py)."""
    with account_scope_checked() as watch:
        yield
    assert watch.found == [], "statements not scoped to one account:\n" + "\n".join(watch.found)


@pytest.fixture
def postgres_engine(migrated_postgres_url: str) -> Iterator[sa.Engine]:
    """PostgreSQL alone, for what only it can show (row locks meeting, machines' clocks)."""
    created = create_store_engine(migrated_postgres_url)
    yield created
    created.dispose()


@pytest.fixture
def machine() -> MachineProcesses:
    """This machine's processes, as lease rows name them."""
    found = this_machine()
    assert found is not None, "this machine's /proc tells processes apart"
    return found


@pytest.fixture
def stand_in() -> Iterator[subprocess.Popen[bytes]]:
    """A process of this machine that stands for the holder of a lease or a send."""
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    yield process
    process.kill()
    process.wait()
