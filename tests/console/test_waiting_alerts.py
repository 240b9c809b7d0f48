"""An owner alert waits exactly as long as its draft is live, on an SQLite and a PostgreSQL
store: an agent's delete_draft or send_draft of a kept draft (the use cases the tools run)
dismisses its alert, the overview counts only alerts on live drafts, and a live draft is
listed and can be sent however many newer alerts stand on drafts long gone."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from console.test_drafts_page import FRIEND, Owner, form_fields, outbox, signed_in
from mailfathom.adapters.sql.owner_alerts import SqlOwnerAlerts
from mailfathom.app.confirmation.confirmed_sending import alert_key
from mailfathom.app.confirmation.ports import OwnerAlert
from mailfathom.domain.access import ALL_PERMISSIONS, Caller, ConfirmationMode

SENDER = Caller(ALL_PERMISSIONS, "sender", ConfirmationMode.NONE)


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def owner(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Owner]:
    url = request.getfixturevalue("migrated_postgres_url") if request.param != "sqlite" else None
    with signed_in(tmp_path, database_url=url) as signed:
        yield signed


def waiting_count(owner: Owner) -> int:
    return owner.services.console_overview().overview().counts.alerts_waiting


def stale_alert(owner: Owner, later: timedelta) -> None:
    """An undismissed alert naming a draft the store does not hold live, as a store written
    before alerts were dismissed with their drafts may still keep."""
    draft_id = str(uuid.uuid4())
    SqlOwnerAlerts(owner.services.engine).raise_alert(
        OwnerAlert(
            key=alert_key(draft_id),
            account_id="home",
            draft_id=draft_id,
            reason="unavailable",
            raised_at=owner.services.clock() + later,
        )
    )


def test_an_agents_delete_of_a_kept_draft_dismisses_its_alert(owner: Owner) -> None:
    draft_id = owner.keep()
    assert waiting_count(owner) == 1
    owner.services.drafting().delete.delete(SENDER, draft_id)
    assert owner.services.alerts().listing() == []
    assert waiting_count(owner) == 0
    assert owner.page().xpath('//*[@id="none-waiting"]')


def test_an_agents_send_of_a_kept_draft_dismisses_its_alert(owner: Owner) -> None:
    draft_id = owner.keep()
    owner.services.drafting().send.send(SENDER, draft_id)
    assert len(outbox(owner)) == 1
    assert owner.services.alerts().listing() == []
    assert waiting_count(owner) == 0


def test_alerts_on_drafts_gone_are_not_counted_nor_hide_a_live_one(owner: Owner) -> None:
    draft_id = owner.keep()
    for minutes in range(1, 61):
        stale_alert(owner, timedelta(minutes=minutes))
    assert waiting_count(owner) == 1
    page = owner.page()
    assert page.xpath(f'//section[@id="draft-{draft_id}"]')
    after = owner.post(f"/drafts/{draft_id}/send", **form_fields(page, f"/drafts/{draft_id}/send"))
    assert after.xpath('//*[@id="none-waiting"]')
    (sent,) = owner.services.outbox().listing(limit=10)
    assert [r.address for r in sent.record.recipients] == [FRIEND]
