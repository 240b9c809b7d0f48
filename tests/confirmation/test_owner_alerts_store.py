"""Owner alerts on SQLite, PostgreSQL and in memory: one alert per draft however often it is raised,
newest first, dismissed once; and the migration that makes and removes the table."""

from __future__ import annotations

import dataclasses
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa

from mailfathom.adapters.sql import migrate
from mailfathom.app.confirmation.confirmed_sending import alert_key
from mailfathom.app.confirmation.ports import OwnerAlert
from store.conftest import Backend

T0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def _alert(draft_id: str, at: datetime = T0, account: str = "work") -> OwnerAlert:
    return OwnerAlert(alert_key(draft_id), account, draft_id, "confirmation_unavailable", at)


def test_an_alert_is_kept_once_per_draft_and_listed_newest_first(backend: Backend) -> None:
    alerts = backend.alerts()
    assert alerts.raise_alert(_alert("d-1")) is True
    assert alerts.raise_alert(_alert("d-2", T0 + timedelta(minutes=1), "home")) is True
    assert alerts.raise_alert(_alert("d-1", T0 + timedelta(minutes=5))) is False
    listed = alerts.listing(include_dismissed=False, limit=10)
    assert [(a.draft_id, a.account_id, a.raised_at) for a in listed] == [
        ("d-2", "home", T0 + timedelta(minutes=1)),
        ("d-1", "work", T0),
    ]
    assert listed[1].key == alert_key("d-1")
    assert alerts.listing(include_dismissed=False, limit=1) == listed[:1]


def test_racing_raises_of_one_alert_leave_one_row(backend: Backend) -> None:
    alerts = backend.alerts()
    with ThreadPoolExecutor(max_workers=8) as pool:
        recorded = list(pool.map(lambda _: alerts.raise_alert(_alert("d-race")), range(16)))
    # Exactly one of them recorded it, and says so.
    assert recorded.count(True) == 1
    assert recorded.count(False) == 15
    assert [a.draft_id for a in alerts.listing(True, 10)] == ["d-race"]


def test_a_dismissed_alert_leaves_the_list_and_is_dismissed_once(backend: Backend) -> None:
    alerts = backend.alerts()
    alerts.raise_alert(_alert("d-1"))
    later = T0 + timedelta(hours=1)
    assert alerts.dismiss(alert_key("d-1"), later) is True
    assert alerts.dismiss(alert_key("d-1"), later) is False
    assert alerts.dismiss(alert_key("unknown"), later) is False
    assert alerts.listing(include_dismissed=False, limit=10) == []
    [kept] = alerts.listing(include_dismissed=True, limit=10)
    assert kept.dismissed_at == later
    # Raised again after a dismissal: the draft's alert stays the one that was dismissed.
    alerts.raise_alert(_alert("d-1", later))
    assert alerts.listing(include_dismissed=False, limit=10) == []


def test_an_alert_is_held_with_its_reason_whether_or_not_it_was_dismissed(
    backend: Backend,
) -> None:
    alerts = backend.alerts()
    assert alerts.held_reason(alert_key("d-held")) is None
    alerts.raise_alert(_alert("d-held"))
    assert alerts.held_reason(alert_key("d-held")) == "confirmation_unavailable"
    alerts.dismiss(alert_key("d-held"), T0 + timedelta(hours=1))
    assert alerts.held_reason(alert_key("d-held")) == "confirmation_unavailable"
    alerts.raise_alert(dataclasses.replace(_alert("d-other"), reason="sensitive_content"))
    assert alerts.held_reason(alert_key("d-other")) == "sensitive_content"


def test_the_migration_makes_the_table_and_takes_it_away_again(engine: sa.Engine) -> None:
    assert "owner_alerts" in sa.inspect(engine).get_table_names()
    migrate.downgrade(engine, "0006_drafts")
    assert "owner_alerts" not in sa.inspect(engine).get_table_names()
    migrate.upgrade(engine)
    assert "owner_alerts" in sa.inspect(engine).get_table_names()
    assert migrate.stored_revision(engine) == migrate.head_revision()
