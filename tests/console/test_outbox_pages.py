"""The console's outbox and mailbox-changes pages in process over an SQLite deployment: what
each shows, a held send withdrawn and a dead-lettered change retried by a form POST, and a
POST without the session's token or from another origin refused with nothing done."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import httpx2
import lxml.html
import pytest
from starlette.testclient import TestClient

import log_audit
from mailfathom.adapters.sql.folder_creations import SqlFolderCreations
from mailfathom.adapters.sql.mutations import SqlMutationStore
from mailfathom.adapters.sql.outbox import SqlOutbox
from mailfathom.app.flags.explanations import explain
from mailfathom.app.flags.set_mail_flags import FlagChangeRequest
from mailfathom.app.organize.organize_email import OrganizeRequest
from mailfathom.app.sending.ports import NewOutgoing
from mailfathom.bootstrap import Services
from mailfathom.domain.access import ALL_PERMISSIONS, Caller
from mailfathom.domain.mutations import MutationFailure, MutationState
from mailfathom.domain.outgoing import AddressField, OutgoingKind, Recipient, Stage
from mailfathom.entrypoints.console.pages import build_console_app
from mailfathom.entrypoints.console.serving import console_use_cases
from sync.helpers import stored_rows

from .conftest import ORIGIN, PASSWORD, Clock, Console, console_config

HOSTILE_ADDRESS = '"<img src=x onerror=alert(1)>"@example.net'
AGENT = Caller(ALL_PERMISSIONS, "agent")


@pytest.fixture
def owned(tmp_path: Path) -> Iterator[Console]:
    log_audit.register(PASSWORD, HOSTILE_ADDRESS)
    clock = Clock()
    with Services.open(console_config(tmp_path), clock=clock) as services:
        services.console_access().set_password(PASSWORD)
        uses = console_use_cases(services)
        with TestClient(build_console_app(uses, "127.0.0.1"), base_url=ORIGIN) as client:
            console = Console(client, services, clock)
            assert console.sign_in().status_code == 303
            yield console


def _queue(console: Console, hours: float | None) -> uuid.UUID:
    now = console.clock()
    after = None if hours is None else now + timedelta(hours=hours)
    key = uuid.uuid4().hex
    record, _ = SqlOutbox(console.services.engine).record(
        NewOutgoing(
            outgoing_id=uuid.uuid4(),
            account_id="home",
            idempotency_key=key,
            caller="agent",
            kind=OutgoingKind.NEW,
            queued_at=now,
            not_before=after or now,
            message_id=f"<{key}@example.org>",
            envelope_from="me@example.org",
            mime=b"Subject: x\r\n\r\nbody\r\n",
            recipients=(Recipient(AddressField.TO, HOSTILE_ADDRESS),),
            send_after=after,
        ),
        [],
    )
    return record.outgoing_id


def _tree(console: Console, path: str) -> lxml.html.HtmlElement:
    page = console.client.get(path)
    assert page.status_code == 200
    return lxml.html.fromstring(page.text)


def _post(console: Console, action: str, csrf: str | None, origin: str = ORIGIN) -> httpx2.Response:
    data = {} if csrf is None else {"csrf": csrf}
    return console.client.post(
        action, data=data, headers={"Origin": origin}, follow_redirects=False
    )


def test_the_pages_need_a_signed_in_owner(tmp_path: Path) -> None:
    with Services.open(console_config(tmp_path)) as services:
        uses = console_use_cases(services)
        with TestClient(build_console_app(uses, "127.0.0.1"), base_url=ORIGIN) as client:
            for path in ("/outbox", "/mutations"):
                answer = client.get(path, follow_redirects=False)
                assert (answer.status_code, answer.headers["location"]) == (303, "/login")
            answer = client.post(
                f"/outbox/{uuid.uuid4()}/cancel",
                headers={"Origin": ORIGIN},
                follow_redirects=False,
            )
            assert (answer.status_code, answer.headers["location"]) == (303, "/login?expired=1")


def test_a_held_send_is_shown_without_its_message_and_withdrawn_by_its_form(
    owned: Console,
) -> None:
    held = _queue(owned, 2)
    due = _queue(owned, None)
    tree = _tree(owned, "/outbox")
    row = tree.get_element_by_id(f"send-{held}")
    assert row.get("data-state") == "held"
    assert tree.get_element_by_id(f"send-{due}").get("data-state") == "queued"
    # The address is text in the page, never markup.
    assert HOSTILE_ADDRESS in row.text_content()
    assert not tree.xpath("//img")
    assert "body" not in row.text_content()
    (action,) = row.xpath(".//form/@action")
    assert action == f"/outbox/{held}/cancel"
    (csrf,) = row.xpath('.//input[@name="csrf"]/@value')

    assert _post(owned, action, None).status_code == 403
    assert _post(owned, action, "not-the-token").status_code == 403
    assert _post(owned, action, csrf, "http://evil.example").status_code == 403
    outbox = owned.services.outbox()
    assert outbox.find(held).stage is Stage.QUEUED  # type: ignore[union-attr]

    answer = _post(owned, action, csrf)
    assert answer.status_code == 303
    assert answer.headers["location"] == "/outbox?done=now"
    assert outbox.find(held).stage is Stage.CANCELLED  # type: ignore[union-attr]
    assert outbox.find(due).stage is Stage.QUEUED  # type: ignore[union-attr]
    tree = _tree(owned, "/outbox?done=now")
    assert tree.get_element_by_id("notice").text_content() == (
        "The send was cancelled; it will not be sent."
    )
    row = tree.get_element_by_id(f"send-{held}")
    assert (row.get("data-state"), row.xpath(".//form")) == ("cancelled", [])
    again = _post(owned, action, csrf)
    assert again.headers["location"] == "/outbox?done=already-ended"


def test_the_outbox_speaks_czech_and_slovak(owned: Console) -> None:
    _queue(owned, 2)
    cs = _tree(owned, "/outbox?lang=cs")
    assert cs.xpath("/html/@lang") == ["cs"]
    assert cs.xpath("//main/h1/text()") == ["K odeslání"]
    assert cs.xpath("//form[contains(@action, '/cancel')]/button/text()") == ["Zrušit"]
    assert cs.xpath("//form[contains(@action, '/cancel')]/@action")[0].endswith("?lang=cs")
    sk = _tree(owned, "/mutations?lang=sk")
    assert sk.xpath("//p[@id='empty']/text()") == ["Žiadna zmena schránky nečaká ani neuviazla."]


def _changed(owned: Console) -> uuid.UUID:
    """A flag change recorded on a synchronized local message, then dead-lettered as a run
    does when its attempts are spent."""
    services = owned.services
    services.deliver_sample_mail("home", 1)
    services.account_synchronizer().run_once(services.config.accounts[0])
    email = next(iter(stored_rows(services, "home"))).stored_email_id
    recorded = services.flags().record(AGENT, FlagChangeRequest(str(email), flagged=True))
    (record,) = recorded.records
    store = SqlMutationStore(services.engine)
    now = owned.clock()
    store.begin([record.record_id], now)
    store.settle(
        [record.record_id], MutationState.DEAD_LETTERED, int(MutationFailure.ATTEMPTS_SPENT), now
    )
    return record.record_id


def test_a_dead_lettered_change_shows_its_reason_and_is_retried_by_its_form(
    owned: Console,
) -> None:
    record_id = _changed(owned)
    tree = _tree(owned, "/mutations")
    row = tree.get_element_by_id(f"change-{record_id}")
    assert row.get("data-state") == "dead-lettered"
    assert row.xpath(".//span[@class='code']/text()") == [str(int(MutationFailure.ATTEMPTS_SPENT))]
    (action,) = row.xpath(".//form/@action")
    (csrf,) = row.xpath('.//input[@name="csrf"]/@value')
    assert _post(owned, action, "not-the-token").status_code == 403
    assert _post(owned, action, csrf, "http://evil.example").status_code == 403
    records = owned.services.mutations()
    assert records.find(record_id).state is MutationState.DEAD_LETTERED  # type: ignore[union-attr]

    answer = _post(owned, action, csrf)
    assert answer.headers["location"] == "/mutations?done=now"
    assert records.find(record_id).state is MutationState.PENDING  # type: ignore[union-attr]
    row = _tree(owned, "/mutations").get_element_by_id(f"change-{record_id}")
    assert (row.get("data-state"), row.xpath(".//form")) == ("pending", [])
    again = _post(owned, action, csrf)
    assert again.headers["location"] == "/mutations?done=not-dead-lettered"


def test_a_folder_alias_with_hidden_characters_is_shown_with_them_written_out(
    owned: Console,
) -> None:
    """A folder created with a character that renders as nothing, so that it reads like
    another (asked for before such names were refused, or mapped so by the operator): the
    change's folder and destination show every character."""
    services = owned.services
    account = services.config.accounts[0]
    services.deliver_sample_mail("home", 1)
    services.account_synchronizer().run_once(account)
    lookalike = "Arc\u200bhive"
    organizer = services.organizer()
    SqlFolderCreations(services.engine).request(
        "home", lookalike, lookalike, None, AGENT.label, "f1", owned.clock()
    )
    services.account_synchronizer().run_once(account)
    email = next(iter(stored_rows(services, "home"))).stored_email_id
    moved = organizer.organize(
        AGENT, OrganizeRequest("move", stored_email_ids=[str(email)], folder=lookalike)
    )
    (change,) = moved.changed
    store = SqlMutationStore(services.engine)
    store.begin([change.record.record_id], owned.clock())
    store.settle(
        [change.record.record_id],
        MutationState.DEAD_LETTERED,
        int(MutationFailure.ATTEMPTS_SPENT),
        owned.clock(),
    )
    page = owned.client.get("/mutations").text
    assert lookalike not in page
    assert "Arc⟦U+200B ZERO WIDTH SPACE⟧hive" in page


def _folder_asked(
    owned: Console, name: str, request_id: str, parent: str | None = None
) -> uuid.UUID:
    """A folder creation an agent asked for, pending."""
    organizer = owned.services.organizer()
    asked = OrganizeRequest(
        "createFolder", account="home", name=name, parent=parent, request_id=request_id
    )
    outcome = organizer.organize(AGENT, asked)
    assert outcome.folder is not None
    return outcome.folder.record.creation_id


def _creation_dead_lettered(owned: Console, creation_id: uuid.UUID, code: MutationFailure) -> None:
    """One attempt begun, then the record dead-lettered under `code`, as a run does."""
    store = SqlFolderCreations(owned.services.engine)
    now = owned.clock()
    store.begin(creation_id, "noted", now)
    store.settle(creation_id, MutationState.DEAD_LETTERED, int(code), now)


def _cells(row: lxml.html.HtmlElement) -> dict[str, str]:
    return {str(td.get("data-label")): td.text_content().strip() for td in row.xpath("./td")}


def test_folder_creations_are_listed_and_a_dead_lettered_one_retried_by_its_form(
    owned: Console,
) -> None:
    services = owned.services
    services.account_synchronizer().run_once(services.config.accounts[0])
    gone = _folder_asked(owned, "Receipts", "f1", parent="INBOX")
    _creation_dead_lettered(owned, gone, MutationFailure.FOLDER_GONE)
    waiting = _folder_asked(owned, "Later", "f2")
    tree = _tree(owned, "/mutations")
    assert [row.get("id") for row in tree.xpath("//tbody/tr")] == [
        f"change-{gone}",
        f"change-{waiting}",
    ]
    row = tree.get_element_by_id(f"change-{gone}")
    assert row.get("data-state") == "dead-lettered"
    assert row.xpath("string(.//span[@class='kind'])") == "(create folder)"
    cells = _cells(row)
    assert (cells["Folder"], cells["Value"], cells["Attempts"]) == (
        "INBOX/Receipts",
        "under INBOX",
        "1",
    )
    code = MutationFailure.FOLDER_GONE
    assert row.xpath(".//span[@class='code']/text()") == [str(int(code))]
    assert row.xpath(".//span[@class='reason']/text()") == [explain(code, creation=True)]
    pending = tree.get_element_by_id(f"change-{waiting}")
    assert pending.get("data-state") == "pending"
    assert (_cells(pending)["Folder"], _cells(pending)["Value"]) == ("Later", "(top level)")
    assert pending.xpath(".//form") == []

    (action,) = row.xpath(".//form/@action")
    (csrf,) = row.xpath('.//input[@name="csrf"]/@value')
    answer = _post(owned, action, csrf)
    assert answer.headers["location"] == "/mutations?done=now"
    assert services.mutations().find(gone).state is MutationState.PENDING  # type: ignore[union-attr]
    row = _tree(owned, "/mutations").get_element_by_id(f"change-{gone}")
    assert (row.get("data-state"), row.xpath(".//form")) == ("pending", [])


def test_a_retry_of_a_folder_whose_name_was_taken_meanwhile_says_so(owned: Console) -> None:
    """A retry posted by hand for a creation whose alias another request claims now: the
    record stays dead-lettered and the page says why and what to do."""
    first = _folder_asked(owned, "Receipts", "f1")
    _creation_dead_lettered(owned, first, MutationFailure.ATTEMPTS_SPENT)
    _folder_asked(owned, "Receipts", "f2")
    answer = _post(owned, f"/mutations/{first}/retry", owned.form_token("/"))
    assert answer.headers["location"] == "/mutations?done=alias-claimed"
    found = owned.services.mutations().find(first)
    assert found is not None
    assert found.state is MutationState.DEAD_LETTERED
    notice = _tree(owned, "/mutations?done=alias-claimed").get_element_by_id("notice")
    assert notice.text_content() == (
        "The folder's name is now taken by another folder or folder request, so the change "
        "stays dead-lettered; ask for the folder again under another name."
    )


@pytest.mark.parametrize("language", ["en", "cs", "sk"])
def test_every_outcome_of_a_retry_has_a_notice_of_its_own(owned: Console, language: str) -> None:
    def notice(path: str, done: str) -> str:
        tree = _tree(owned, f"{path}?lang={language}&done={done}")
        return str(tree.get_element_by_id("notice").text_content())

    outcomes = ("now", "not-dead-lettered", "alias-claimed", "not-found")
    notices = [notice("/mutations", done) for done in outcomes]
    assert len(set(notices)) == len(outcomes)
    # A change not found is not told as a send not found.
    assert notice("/outbox", "not-found") not in notices
