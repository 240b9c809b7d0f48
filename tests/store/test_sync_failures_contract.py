"""The last coded failure of an account's and a folder's synchronization as the store keeps
it: one per account and folder, the latest replacing the one before, cleared by a pass that
succeeded, and gone with the 0025 migration both ways; on SQLite and PostgreSQL alike."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import sqlalchemy as sa

from mailfathom.adapters.sql import migrate
from mailfathom.adapters.sql.sync_failures import SqlSyncFailures
from mailfathom.domain.sync_failures import SyncFailure

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)


def _kept(failures: SqlSyncFailures) -> list[tuple[str, int | None, int, datetime]]:
    # SQLite hands a timestamp back without its zone; both are kept in UTC.
    return [
        (f.account_id, f.folder_id, f.code, f.at.replace(tzinfo=UTC)) for f in failures.failures()
    ]


def test_the_latest_failure_of_each_account_and_folder_is_kept(engine: sa.Engine) -> None:
    failures = SqlSyncFailures(engine)
    assert failures.failures() == []
    failures.failed("work", None, 31001, NOW)
    failures.failed("work", None, 31002, NOW + timedelta(minutes=1))
    failures.failed("work", 7, 31006, NOW + timedelta(minutes=2))
    failures.failed("home", 3, 31001, NOW + timedelta(minutes=3))
    assert _kept(failures) == [
        ("home", 3, 31001, NOW + timedelta(minutes=3)),
        ("work", None, 31002, NOW + timedelta(minutes=1)),
        ("work", 7, 31006, NOW + timedelta(minutes=2)),
    ]
    assert all(isinstance(f, SyncFailure) for f in failures.failures())


def test_a_pass_clears_the_account_and_the_folders_it_synchronized(engine: sa.Engine) -> None:
    failures = SqlSyncFailures(engine)
    failures.failed("work", None, 31002, NOW)
    failures.failed("work", 7, 31006, NOW)
    failures.failed("work", 8, 31001, NOW)
    failures.failed("home", None, 31001, NOW)
    failures.passed("work", [8])
    assert _kept(failures) == [("home", None, 31001, NOW), ("work", 7, 31006, NOW)]
    failures.passed("work", [])
    failures.passed("nobody", [1, 2])
    assert [(f.account_id, f.folder_id) for f in failures.failures()] == [
        ("home", None),
        ("work", 7),
    ]


def test_two_writers_of_one_record_leave_one(engine: sa.Engine) -> None:
    mine, other = SqlSyncFailures(engine), SqlSyncFailures(engine)
    mine.failed("work", 4, 31001, NOW)
    other.failed("work", 4, 31006, NOW + timedelta(seconds=5))
    assert _kept(mine) == [("work", 4, 31006, NOW + timedelta(seconds=5))]


def test_going_below_the_failures_revision_and_back(engine: sa.Engine) -> None:
    SqlSyncFailures(engine).failed("work", None, 31002, NOW)
    migrate.downgrade(engine, "0024_caller_keys")
    assert "sync_failures" not in sa.inspect(engine).get_table_names()
    migrate.upgrade(engine)
    assert migrate.current_revision(engine) == migrate.NEWEST_REVISION
    assert SqlSyncFailures(engine).failures() == []
