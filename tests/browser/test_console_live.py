"""Open console pages bringing themselves up to date, in Chromium on `mailfathom serve`: an
agent's send that nobody can confirm (an owner alert) appears on the open overview and
"Waiting for you" pages, one kept by another process writing the same store appears too,
and a held send that leaves changes state on the open outbox page; each without a reload
(the page's one navigation, and a marker set in it, survive), announced to screen readers,
with no serious accessibility finding after the update."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from mcp import Client
from playwright.sync_api import Browser, Page, expect

from browser.axe_core import Violation
from browser.chromium import PHONE
from browser.console import AGENT_KEY, Console, served_console
from browser.fixtures import Screenshots
from log_audit import register_all
from mailfathom.app.confirmation.confirmed_sending import NobodyToAsk, Status
from mailfathom.app.drafting.composition import DraftRequest
from mailfathom.domain.access import ALL_PERMISSIONS, Caller, ConfirmationMode
from mailfathom.domain.outgoing import Stage
from mcp_tests.client import over_http, structured
from sending.helpers import SMTP_PASSWORD, SMTP_USER
from servers.smtp import SmtpServer

Axe = Callable[[Page], list[Violation]]
MODES = ["2026-07-28", "legacy"]
AGENT = Caller(ALL_PERMISSIONS, "agent", ConfirmationMode.ASK)
GUEST = "guest@example.net"
# How long a page may take to show news before the test fails (not a measured bound).
NEWS_DEADLINE_MS = 30_000


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Console]:
    with served_console(tmp_path_factory.mktemp("live")) as served:
        yield served


@pytest.fixture(scope="module")
def smtp() -> Iterator[SmtpServer]:
    server = SmtpServer({SMTP_USER: SMTP_PASSWORD}).start()
    yield server
    server.close()


@pytest.fixture(scope="module")
def delivering(tmp_path_factory: pytest.TempPathFactory, smtp: SmtpServer) -> Iterator[Console]:
    with served_console(tmp_path_factory.mktemp("live-sending"), smtp) as served:
        yield served


def sign_in(page: Page, console: Console) -> None:
    page.goto(console.url("/login"))
    page.locator("#password").fill(console.password)
    with page.expect_navigation():
        page.locator("button[type=submit]").click()
    assert page.url == console.url("/")


def opened(page: Page, console: Console, path: str) -> Page:
    """`page` at `path`, with a marker set in it that a reload would lose."""
    page.goto(console.url(path))
    page.evaluate("() => { window.liveMarker = 'still here'; }")
    return page


def not_reloaded(page: Page) -> bool:
    navigations = page.evaluate("() => performance.getEntriesByType('navigation').length")
    return bool(navigations == 1 and page.evaluate("() => window.liveMarker") == "still here")


def agent_sends(console: Console, subject: str, mode: str) -> dict[str, Any]:
    """The agent's send_email over Streamable HTTP from a client that declares no form
    elicitation (nobody can be asked), in a thread of its own: Playwright's loop holds this
    one."""
    register_all([subject])
    arguments = {
        "account": "work",
        "to": [GUEST],
        "subject": subject,
        "plainTextBody": "Please book the room.\n",
        "idempotencyKey": uuid.uuid4().hex,
    }

    async def work(client: Client) -> dict[str, Any]:
        return structured(await client.call_tool("send_email", arguments))

    with ThreadPoolExecutor(1) as worker:
        return worker.submit(over_http, console.mcp_url, AGENT_KEY, work, mode=mode).result()


def count(page: Page, selector: str) -> int:
    return int(page.locator(selector).inner_text())


@pytest.mark.parametrize("mode", MODES)
def test_an_agents_send_nobody_can_confirm_appears_on_the_open_pages(
    new_page: Callable[..., Page], console: Console, screenshots: Screenshots, axe: Axe, mode: str
) -> None:
    overview, drafts = new_page(), new_page()
    for each in (overview, drafts):
        sign_in(each, console)
    opened(overview, console, "/")
    opened(drafts, console, "/drafts")
    before = count(overview, "#alerts-waiting")
    subject = f"Room booking {uuid.uuid4().hex[:6]}"

    answer = agent_sends(console, subject, mode)
    assert (answer["status"], answer["reason"]) == ("draft", "confirmation_unavailable")

    expect(overview.locator("#alerts-waiting")).to_have_text(
        str(before + 1), timeout=NEWS_DEADLINE_MS
    )
    shown = drafts.locator("section.waiting-draft h2", has_text=subject)
    expect(shown).to_have_count(1, timeout=NEWS_DEADLINE_MS)
    for open_page in (overview, drafts):
        assert not_reloaded(open_page)
        expect(open_page.locator("#live-news")).to_have_text("This page was brought up to date.")
        axe(open_page)
    screenshots.take(overview, "overview after the alert")
    screenshots.take(drafts, "drafts after the alert")
    # The draft that arrived is the one to decide on: its Send works from the open page.
    section = drafts.locator("section.waiting-draft", has=drafts.locator("h2", has_text=subject))
    with drafts.expect_navigation():
        section.get_by_role("button", name="Send").click()
    assert drafts.locator("#notice").inner_text() == "The message was queued for sending."


def test_an_alert_kept_by_another_process_appears_on_the_open_overview_on_a_phone(
    new_page: Callable[..., Page], console: Console, screenshots: Screenshots, axe: Axe
) -> None:
    phone = new_page(PHONE, locale="cs-CZ")
    sign_in(phone, console)
    overview = opened(phone, console, "/")
    before = count(overview, "#alerts-waiting")
    subject = f"Kept elsewhere {uuid.uuid4().hex[:6]}"
    register_all([subject, GUEST])
    with console.services() as services:
        drafting = services.drafting()
        request = DraftRequest(
            account="work", subject=subject, to=[GUEST], plain_text_body="Kept.\n"
        )
        draft_id = str(drafting.save.save(AGENT, request).draft_id)
        assert drafting.send.settle(AGENT, draft_id, NobodyToAsk(), None).status is Status.DRAFT
    expect(overview.locator("#alerts-waiting")).to_have_text(
        str(before + 1), timeout=NEWS_DEADLINE_MS
    )
    assert not_reloaded(overview)
    expect(overview.locator("#live-news")).to_have_text("Stránka byla aktualizována.")
    screenshots.take(overview, "phone overview after an alert from elsewhere")
    axe(overview)


def _held_send(console: Console, seconds: float) -> uuid.UUID:
    """A send the agent asked to leave `seconds` from now, queued by this process."""
    register_all(["Held for a moment", GUEST])
    with console.services() as services:
        uses = services.drafting()
        caller = Caller(ALL_PERMISSIONS, "agent")
        request = DraftRequest(
            account="work", subject="Held for a moment", to=[GUEST], plain_text_body="Soon.\n"
        )
        saved = uses.save.save(caller, request)
        instant = datetime.now(UTC) + timedelta(seconds=seconds)
        return uses.send.send(caller, str(saved.draft_id), instant.isoformat()).outgoing_id


def test_a_held_send_that_leaves_changes_state_on_the_open_outbox(
    page: Page, delivering: Console, smtp: SmtpServer, screenshots: Screenshots, axe: Axe
) -> None:
    sign_in(page, delivering)
    held = _held_send(delivering, 20)
    outbox = opened(page, delivering, "/outbox")
    row = outbox.locator(f"#send-{held}")
    assert row.get_attribute("data-state") == "held"
    screenshots.take(outbox, "outbox with a held send")

    expect(row).to_have_attribute("data-state", "sent", timeout=60_000)
    assert not_reloaded(outbox)
    expect(outbox.locator("#live-news")).to_have_text("This page was brought up to date.")
    screenshots.take(outbox, "the held send left")
    axe(outbox)
    assert [r.rcpt_tos for r in smtp.received()] == [[GUEST]]
    with delivering.services() as services:
        record = services.outbox().find(held)
        assert record is not None
        assert record.stage is Stage.SENT


def test_without_javascript_the_page_works_and_a_reload_shows_the_news(
    browser: Browser, console: Console
) -> None:
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        sign_in(page, console)
        before = count(page, "#alerts-waiting")
        agent_sends(console, f"Quiet page {uuid.uuid4().hex[:6]}", "legacy")
        page.reload()
        assert count(page, "#alerts-waiting") == before + 1
        assert page.locator("script:not([src])").count() == 0
    finally:
        context.close()
