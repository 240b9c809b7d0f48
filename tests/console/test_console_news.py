"""The mark the console's live pages watch, read from SQLite and PostgreSQL: it holds still
while nothing changes, moves when an owner alert is raised or dismissed, a draft is edited, a
send is queued, comes due or is cancelled, or a folder creation is asked for, carried or
dead-lettered, and the visit's look ends at sign-out."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

import log_audit
from console.conftest import PASSWORD
from console.test_drafts_page import drafts_config
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.adapters.sql.folder_creations import SqlFolderCreations
from mailfathom.app.confirmation.confirmed_sending import NobodyToAsk, Status
from mailfathom.app.console.live import ConsoleNews
from mailfathom.app.console.signing_in import Visit
from mailfathom.app.drafting.composition import DraftRequest
from mailfathom.app.organize.organize_email import OrganizeRequest
from mailfathom.bootstrap import Services
from mailfathom.domain.access import ALL_PERMISSIONS, Caller, ConfirmationMode
from mailfathom.domain.mutations import MutationFailure, MutationState
from sending.helpers import StoreTime

ASKS = Caller(ALL_PERMISSIONS, "agent", ConfirmationMode.ASK)
AGENT = Caller(ALL_PERMISSIONS, "agent")
FRIEND = "friend@example.net"


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def opened(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Services, StoreTime]]:
    url = request.getfixturevalue("migrated_postgres_url") if request.param != "sqlite" else None
    log_audit.register_all([PASSWORD, FRIEND, "Plans", "Later"])
    clock = StoreTime(postgres=url is not None)
    config = load_config(drafts_config(tmp_path, database_url=url))
    with Services.open(config, clock=clock.process(timedelta(0))) as s:
        yield s, clock


def signed_in(services: Services) -> str:
    access = services.console_access()
    access.set_password(PASSWORD)
    form = access.visit()
    visit = access.sign_in(form.token, form.session.csrf_secret, PASSWORD, "127.0.0.1")
    assert isinstance(visit, Visit)
    return visit.token


def test_the_mark_moves_with_what_the_live_pages_show(
    opened: tuple[Services, StoreTime],
) -> None:
    services, clock = opened
    news: ConsoleNews = services.console_news()
    token = signed_in(services)
    assert news.look(None) is None
    assert news.look("not-a-token") is None
    marks = [news.look(token)]
    assert marks[0] is not None
    assert news.look(token) == marks[0]

    drafting = services.drafting()
    request = DraftRequest(account="home", subject="Plans", to=[FRIEND], plain_text_body="A.\n")
    kept = str(drafting.save.save(ASKS, request).draft_id)
    assert drafting.send.settle(ASKS, kept, NobodyToAsk(), None).status is Status.DRAFT
    marks.append(news.look(token))

    clock.wait_until(clock.now() + timedelta(seconds=1))
    edited = DraftRequest(account="home", subject="Plans", to=[FRIEND], plain_text_body="B.\n")
    drafting.update.update(ASKS, kept, edited)
    marks.append(news.look(token))

    (alert,) = services.alerts().listing()
    services.alerts().dismiss(alert.key)
    marks.append(news.look(token))

    later = DraftRequest(account="home", subject="Later", to=[FRIEND], plain_text_body="C.\n")
    saved = drafting.save.save(AGENT, later)
    # Comes due on the store's clock, which on PostgreSQL the test waits for.
    instant = clock.now() + timedelta(seconds=10)
    outgoing = drafting.send.send(AGENT, str(saved.draft_id), instant.isoformat()).outgoing_id
    marks.append(news.look(token))
    assert news.look(token) == marks[-1]

    clock.wait_until(instant + timedelta(seconds=1))
    marks.append(news.look(token))

    assert services.outbox().withdraw(outgoing) is not None
    marks.append(news.look(token))
    assert len(set(marks)) == len(marks), marks

    services.console_access().sign_out(token)
    assert news.look(token) is None


def test_the_mark_moves_with_a_folder_creation_the_mailbox_changes_list(
    opened: tuple[Services, StoreTime],
) -> None:
    services, clock = opened
    news: ConsoleNews = services.console_news()
    token = signed_in(services)
    marks = [news.look(token)]
    asked = OrganizeRequest("createFolder", account="home", name="Receipts", request_id="f1")
    folder = services.organizer().organize(AGENT, asked).folder
    assert folder is not None
    creation_id = folder.record.creation_id
    marks.append(news.look(token))
    assert news.look(token) == marks[-1]

    creations = SqlFolderCreations(services.engine)
    creations.begin(creation_id, "Receipts", clock.now())
    marks.append(news.look(token))
    spent = int(MutationFailure.ATTEMPTS_SPENT)
    creations.settle(creation_id, MutationState.DEAD_LETTERED, spent, clock.now())
    marks.append(news.look(token))
    # Pending again, as when it was asked for: the later instant tells the two apart.
    clock.wait_until(clock.now() + timedelta(seconds=1))
    assert services.mutations().retry(creation_id) is not None
    marks.append(news.look(token))
    assert len(set(marks)) == len(marks), marks
