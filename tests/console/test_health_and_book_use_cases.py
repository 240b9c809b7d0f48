"""The use cases behind the health and contact pages, without a page: what `SyncHealth`
makes of the store's folders, the kept failures, the repairs and the accounts held back;
and how `ConsoleContacts` answers identifiers that name nobody, and which records it offers
to promote. Over an SQLite deployment of one local account."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from mailfathom.adapters.sql.contacts import SqlContactBook
from mailfathom.adapters.sql.pending_repairs import SqlPendingRepairs
from mailfathom.adapters.sql.sync_failures import SqlSyncFailures
from mailfathom.app.console.contact_book import BookEntry, Promoted
from mailfathom.app.console.sync_health import SyncHealth
from mailfathom.app.contacts.ports import PeerEntry
from mailfathom.app.maintenance.store_overview import StoreOverview
from mailfathom.bootstrap import Services
from mailfathom.domain.access import ALL_PERMISSIONS, Caller
from mailfathom.domain.account_health import (
    AccountHealth,
    AccountWarning,
    HealthState,
    WarningState,
)
from mailfathom.domain.contact_collection import SeenPerson
from mailfathom.domain.contacts import ContactWriter

from .conftest import Clock, console_config

AGENT = Caller(ALL_PERMISSIONS, "agent")


@pytest.fixture
def services(tmp_path: Path) -> Iterator[Services]:
    with Services.open(console_config(tmp_path), clock=Clock()) as opened:
        yield opened


def _health(
    services: Services, held: list[AccountHealth], warned: list[AccountWarning] | None = None
) -> SyncHealth:
    return SyncHealth(
        services.config.accounts,
        StoreOverview(services.overview),
        lambda: held,
        lambda: list(warned or []),
        SqlSyncFailures(services.engine),
        SqlPendingRepairs(services.engine),
        clock=services.clock,
    )


def test_a_folder_not_yet_set_up_has_no_time_failure_or_repair(services: Services) -> None:
    # A failure kept for a folder identifier the account's folders do not hold is not shown.
    SqlSyncFailures(services.engine).failed("home", 99, 31006, services.clock())
    (line,) = _health(services, []).report().accounts
    (folder,) = line.folders
    assert (folder.alias, folder.last_committed_at, folder.age_seconds) == ("INBOX", None, None)
    assert (folder.failure, folder.repairs, line.failure, line.repairs) == (None, 0, None, 0)
    assert (line.held, line.consent_command, line.reverify_unfinished) == (None, None, False)


def test_freshness_failures_and_consent_are_read_together(services: Services) -> None:
    services.deliver_sample_mail("home", 2)
    (account,) = services.config.accounts
    services.account_synchronizer().run_once(account)
    clock = services.clock
    assert isinstance(clock, Clock)
    clock.advance(42)
    failed_at = clock() - timedelta(seconds=5)
    SqlSyncFailures(services.engine).failed("home", None, 31003, failed_at)
    held = [AccountHealth("home", HealthState.CONSENT_REQUIRED, 31003, failed_at)]
    report = _health(services, held).report()
    (line,) = report.accounts
    inbox = next(f for f in line.folders if f.alias == "INBOX")
    assert inbox.age_seconds == 42
    assert line.failure is not None
    assert (line.failure.code, line.failure.folder_id) == (31003, None)
    assert line.consent_command == "mailfathom account consent --account home"
    assert report.needing_consent == (line,)
    refused = [AccountHealth("home", HealthState.CREDENTIALS_REFUSED, 31002, failed_at)]
    (line,) = _health(services, refused).report().accounts
    # A refused login is fixed by replacing the secret, not by a grant: no consent command.
    assert line.consent_command is None


def test_a_warning_is_read_beside_a_held_state_and_holds_nothing_itself(
    services: Services,
) -> None:
    at = services.clock()
    unsaved = AccountWarning("home", WarningState.REFRESH_TOKEN_UNSAVED, 31009, at)
    (line,) = _health(services, [], [unsaved]).report().accounts
    assert (line.held, line.warnings, line.consent_command) == (None, (unsaved,), None)
    held = [AccountHealth("home", HealthState.CONSENT_REQUIRED, 31003, at)]
    report = _health(services, held, [unsaved]).report()
    (line,) = report.accounts
    assert line.held == held[0]
    assert line.warnings == (unsaved,)
    assert report.needing_consent == (line,)


def test_identifiers_that_name_nobody_change_nothing(services: Services) -> None:
    book = services.console_contacts()
    for text in ("not-an-id", str(uuid.UUID(int=0)), str(uuid.uuid4())):
        assert book.find(text) is None
        assert book.promote(text) is Promoted.NOT_FOUND
    assert book.erase("not-an-id") is None
    assert book.erase(str(uuid.UUID(int=0))) is None
    erased = book.erase(str(uuid.uuid4()))
    assert erased is not None
    assert erased.was_held is False


def test_promotion_is_offered_where_it_would_change_something(services: Services) -> None:
    book = services.console_contacts()
    store = SqlContactBook(services.engine)
    store.collect([SeenPerson("carla@example.org", "Carla")], services.clock())
    written = services.contacts().creation.create(
        AGENT, "Ann", ["ann@example.net"], "ann@example.net"
    )
    assert written.contact is not None
    store.keep_peers(
        [PeerEntry("work", "Work", ("work@example.com",), "work@example.com")], services.clock()
    )
    entries = {e.contact.display_name: e for e in book.page().entries}
    assert {name: e.promotable for name, e in entries.items()} == {
        "Ann": True,
        "Carla": True,
        "Work": False,
    }
    assert entries["Ann"].writers == (ContactWriter.CALLER,)
    assert book.promote(str(written.contact.contact_id)) is Promoted.NOW
    ann = book.find(str(written.contact.contact_id))
    assert isinstance(ann, BookEntry)
    assert (ann.promotable, ann.writers) == (False, (ContactWriter.OPERATOR,))
    assert book.promote(str(written.contact.contact_id)) is Promoted.ALREADY
