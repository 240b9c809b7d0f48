"""An account's health as the store keeps it: recorded once with its first time, cleared by
a successful login, and carried across the 0019 migration both ways; a warning kept beside
it, which no login clears, and carried across the 0037 migration; on SQLite and PostgreSQL
alike."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import TypeVar

import sqlalchemy as sa

from mailfathom.adapters.sql import migrate
from mailfathom.adapters.sql.account_health import SqlAccountHealth
from mailfathom.domain.account_health import (
    AccountHealth,
    AccountWarning,
    HealthState,
    WarningState,
)

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)


Row = TypeVar("Row", AccountHealth, AccountWarning)


def _as_utc(rows: list[Row]) -> list[Row]:
    # SQLite hands a timestamp back without its zone; both are kept in UTC.
    return [replace(r, since=r.since.replace(tzinfo=UTC)) for r in rows]


def test_a_refused_grant_is_recorded_once_and_a_login_clears_it(engine: sa.Engine) -> None:
    health = SqlAccountHealth(engine)
    assert health.states() == []
    health.consent_required("work", NOW)
    health.consent_required("work", NOW + timedelta(hours=1))
    health.consent_required("home", NOW + timedelta(hours=2))
    assert _as_utc(health.states()) == [
        AccountHealth("home", HealthState.CONSENT_REQUIRED, 31003, NOW + timedelta(hours=2)),
        AccountHealth("work", HealthState.CONSENT_REQUIRED, 31003, NOW),
    ]
    health.restored("work")
    assert [h.account_id for h in health.states()] == ["home"]


def test_a_state_another_process_recorded_is_seen_and_cleared(engine: sa.Engine) -> None:
    mine, other = SqlAccountHealth(engine), SqlAccountHealth(engine)
    mine.restored("work")
    other.consent_required("work", NOW)
    assert [h.account_id for h in mine.states()] == ["work"]
    # The other process may have been a command that has ended since (a one-shot sync, a
    # delivery pass): a login in this one clears what it recorded.
    mine.restored("work")
    assert mine.states() == []
    other.restored("work")
    assert mine.states() == []


def test_going_below_the_health_revision_and_back(engine: sa.Engine) -> None:
    SqlAccountHealth(engine).consent_required("work", NOW)
    migrate.downgrade(engine, "0018_message_trust")
    assert "account_health" not in sa.inspect(engine).get_table_names()
    assert migrate.current_revision(engine) == "0018_message_trust"
    migrate.upgrade(engine)
    assert migrate.current_revision(engine) == migrate.NEWEST_REVISION
    assert SqlAccountHealth(engine).states() == []


def test_a_refused_login_is_recorded_and_a_password_login_clears_only_that(
    engine: sa.Engine,
) -> None:
    health = SqlAccountHealth(engine)
    health.credentials_refused("work", NOW)
    health.credentials_refused("work", NOW + timedelta(hours=1))
    health.consent_required("home", NOW)
    assert _as_utc(health.states()) == [
        AccountHealth("home", HealthState.CONSENT_REQUIRED, 31003, NOW),
        AccountHealth("work", HealthState.CREDENTIALS_REFUSED, 31002, NOW),
    ]
    # An IMAP password accepted says nothing of a grant the account's submission uses.
    health.restored("home", HealthState.CREDENTIALS_REFUSED)
    health.restored("work", HealthState.CREDENTIALS_REFUSED)
    assert [h.account_id for h in health.states()] == ["home"]


def test_a_refresh_token_not_saved_is_warned_once_beside_any_state(engine: sa.Engine) -> None:
    health = SqlAccountHealth(engine)
    assert health.warnings() == []
    health.refresh_token_saved("work")  # nothing recorded: nothing to clear
    health.refresh_token_unsaved("work", NOW)
    health.refresh_token_unsaved("work", NOW + timedelta(minutes=1))
    health.consent_required("work", NOW + timedelta(minutes=2))
    unsaved = AccountWarning("work", WarningState.REFRESH_TOKEN_UNSAVED, 31009, NOW)
    assert _as_utc(health.warnings()) == [unsaved]
    # A warning is no state: nothing of it among the states that hold accounts back, and a
    # login, which clears them, leaves it.
    assert [h.state for h in health.states()] == [HealthState.CONSENT_REQUIRED]
    health.restored("work")
    assert health.states() == []
    assert _as_utc(health.warnings()) == [unsaved]
    # Another process (the one whose write succeeded) clears it.
    SqlAccountHealth(engine).refresh_token_saved("work")
    assert health.warnings() == []
    health.refresh_token_saved("work")
    assert health.warnings() == []


def test_going_below_the_warnings_revision_and_back(engine: sa.Engine) -> None:
    SqlAccountHealth(engine).refresh_token_unsaved("work", NOW)
    SqlAccountHealth(engine).consent_required("work", NOW)
    migrate.downgrade(engine, "0036_search_versions")
    assert "account_warnings" not in sa.inspect(engine).get_table_names()
    assert [h.account_id for h in SqlAccountHealth(engine).states()] == ["work"]
    migrate.upgrade(engine)
    assert migrate.current_revision(engine) == migrate.NEWEST_REVISION
    assert SqlAccountHealth(engine).warnings() == []
