"""A send asked to wait (`sendAfter`) is shown held, and comes due, on the store's clock, the
one the delivery pass claims by: a console served by a process whose clock is two minutes
behind or ahead of the store's shows it held until the instant has passed there, and its
live pages' mark moves when it comes due there, not on the process's own clock."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

import log_audit
from console.conftest import PASSWORD
from console.test_drafts_page import drafts_config
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.app.console.outbox import SendState
from mailfathom.app.console.signing_in import Visit
from mailfathom.app.drafting.composition import DraftRequest
from mailfathom.bootstrap import Services
from mailfathom.domain.access import ALL_PERMISSIONS, Caller
from sending.helpers import StoreTime

AGENT = Caller(ALL_PERMISSIONS, "agent")
FRIEND = "friend@example.net"
SKEW = timedelta(minutes=2)
WAIT = timedelta(seconds=20)


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def config_path(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    url = request.getfixturevalue("migrated_postgres_url") if request.param != "sqlite" else None
    log_audit.register_all([PASSWORD, FRIEND, "Later"])
    return drafts_config(tmp_path, database_url=url)


def signed_in(services: Services) -> str:
    """A visit of the owner's, whose password was set already."""
    access = services.console_access()
    form = access.visit()
    visit = access.sign_in(form.token, form.session.csrf_secret, PASSWORD, "127.0.0.1")
    assert isinstance(visit, Visit)
    return visit.token


def test_a_send_is_held_until_its_instant_on_the_stores_clock(config_path: Path) -> None:
    clock = StoreTime(postgres="postgresql" in config_path.read_text())
    config = load_config(config_path)
    with (
        Services.open(config, clock=clock.process(-SKEW)) as behind,
        Services.open(config, migrate_schema=False, clock=clock.process(SKEW)) as ahead,
    ):
        behind.console_access().set_password(PASSWORD)
        drafting = behind.drafting()
        later = DraftRequest(account="home", subject="Later", to=[FRIEND], plain_text_body="C.\n")
        saved = drafting.save.save(AGENT, later)
        instant = clock.now() + WAIT
        drafting.send.send(AGENT, str(saved.draft_id), instant.isoformat())
        consoles = [(s.console_outbox(), s.console_news(), signed_in(s)) for s in (behind, ahead)]

        held = [[e.state for e in outbox.entries()] for outbox, _, _ in consoles]
        marks = [news.look(token) for _, news, token in consoles]
        assert held == [[SendState.HELD], [SendState.HELD]]

        clock.wait_until(instant + timedelta(seconds=1))
        due = [[e.state for e in outbox.entries()] for outbox, _, _ in consoles]
        assert due == [[SendState.QUEUED], [SendState.QUEUED]]
        moved = [news.look(token) for _, news, token in consoles]
        assert all(m != before for m, before in zip(moved, marks, strict=True))
