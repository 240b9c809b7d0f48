"""The console's "Waiting for you" page in Chromium on `mailfathom serve`, whose account
submits to the capture SMTP server: a kept draft approved reaches the server exactly as the
page showed it; a draft edited by an agent after it was shown is marked so on the open page,
its Send refused and nothing reaches the server; Delete takes the draft away; hostile mail
text stays text in the DOM and never opens a dialog."""

from __future__ import annotations

import email
import email.policy
import json
from collections.abc import Callable, Iterator
from email.message import EmailMessage
from pathlib import Path

import pytest
from playwright.sync_api import Dialog, Page, expect

from browser.axe_core import Violation
from browser.chromium import PHONE
from browser.console import Console, served_console
from browser.fixtures import Screenshots
from log_audit import register_all
from mailfathom.app.confirmation.confirmed_sending import NobodyToAsk, Status
from mailfathom.app.confirmation.wording import Language
from mailfathom.app.drafting.composition import DraftRequest
from mailfathom.domain.access import ALL_PERMISSIONS, Caller, ConfirmationMode
from mailfathom.entrypoints.console.live_wording import LIVE_WORDINGS
from sending.helpers import SMTP_PASSWORD, SMTP_USER
from servers.smtp import SmtpServer
from waiting import wait_for

AGENT = Caller(ALL_PERMISSIONS, "agent", ConfirmationMode.ASK)
FRIEND = "friend@example.net"
Axe = Callable[[Page], list[Violation]]
MADE_BY_PAYLOADS = "script, img, svg, iframe, object, embed, math, video, audio, a, style, link"


@pytest.fixture
def smtp() -> Iterator[SmtpServer]:
    server = SmtpServer({SMTP_USER: SMTP_PASSWORD}).start()
    yield server
    server.close()


@pytest.fixture
def console(tmp_path: Path, smtp: SmtpServer) -> Iterator[Console]:
    with served_console(tmp_path, smtp) as served:
        yield served


def kept(console: Console, subject: str, body: str) -> str:
    """A draft the agent's send left waiting for the owner, kept by this process."""
    register_all([subject, body, FRIEND])
    request = DraftRequest(account="work", subject=subject, to=[FRIEND], plain_text_body=body)
    with console.services() as services:
        drafting = services.drafting()
        draft_id = str(drafting.save.save(AGENT, request).draft_id)
        assert drafting.send.settle(AGENT, draft_id, NobodyToAsk(), None).status is Status.DRAFT
    return draft_id


def sign_in(page: Page, console: Console) -> None:
    page.goto(console.url("/login"))
    page.locator("#password").fill(console.password)
    with page.expect_navigation():
        page.locator("button[type=submit]").click()
    page.goto(console.url("/drafts"))


def messages(smtp: SmtpServer) -> list[tuple[list[str], EmailMessage]]:
    """What the SMTP server received, parsed."""
    found = []
    for received in smtp.received():
        message = email.message_from_bytes(received.content, policy=email.policy.default)
        assert isinstance(message, EmailMessage)
        found.append((received.rcpt_tos, message))
    return found


def nothing_queued(console: Console) -> bool:
    with console.services() as services:
        return list(services.outbox().listing(limit=10)) == []


def test_an_approved_draft_reaches_the_server_exactly_as_shown(
    page: Page, console: Console, smtp: SmtpServer, screenshots: Screenshots, axe: Axe
) -> None:
    draft_id = kept(console, "Quarterly plan", "Here is the plan\u202e.\nSee you.\n")
    sign_in(page, console)
    section = page.locator(f"#draft-{draft_id}")
    rows = {
        row.locator("dt").inner_text(): row.locator("dd").inner_text()
        for row in section.locator(".message-rows > div").all()
    }
    body = section.locator("pre.body").text_content()
    axe(page)
    screenshots.take(page, "draft waiting")
    section.get_by_role("button", name="Send").click()
    page.wait_for_selector("#notice")
    screenshots.take(page, "draft sent")
    assert page.locator(f"#draft-{draft_id}").count() == 0
    ((rcpt_tos, message),) = wait_for(lambda: messages(smtp), "serve delivered the send")
    assert rcpt_tos == [FRIEND]
    assert rows["From"] == str(message["From"])
    assert rows["To"] == str(message["To"])
    assert rows["Subject"] == str(message["Subject"])
    text = message.get_body(("plain",))
    assert text is not None
    # Lines end in CRLF on the wire; the page shows lines.
    sent_body = text.get_content().replace("\r\n", "\n")
    assert body == sent_body.replace("\u202e", "⟦U+202E RIGHT-TO-LEFT OVERRIDE⟧")
    assert "\u202e" in sent_body


def test_a_draft_edited_after_it_was_shown_is_marked_refused_and_nothing_sent(
    page: Page, console: Console, smtp: SmtpServer, screenshots: Screenshots, axe: Axe
) -> None:
    draft_id = kept(console, "First words", "First.\n")
    sign_in(page, console)
    section = page.locator(f"#draft-{draft_id}")
    register_all(["Changed by an agent"])
    with console.services() as services:
        services.drafting().update.update(
            AGENT,
            draft_id,
            DraftRequest(
                account="work", subject="Changed by an agent", to=[FRIEND], plain_text_body="x\n"
            ),
        )
    # The open page says so, and keeps showing what the owner was reading.
    changed = LIVE_WORDINGS[Language.EN].changed
    expect(section.locator(".live-note")).to_have_text(changed, timeout=30_000)
    assert section.locator("h2").inner_text() == "First words"
    screenshots.take(page, "marked as changed on the open page")
    axe(page)
    section.get_by_role("button", name="Send").click()
    page.wait_for_selector("#notice")
    screenshots.take(page, "draft changed since shown")
    assert "changed" in page.locator("#notice").inner_text()
    assert page.locator(f"#draft-{draft_id} h2").inner_text() == "Changed by an agent"
    assert nothing_queued(console)
    assert smtp.received() == []


def test_delete_takes_the_draft_away(
    page: Page, console: Console, smtp: SmtpServer, screenshots: Screenshots
) -> None:
    draft_id = kept(console, "Not wanted", "Bin it.\n")
    sign_in(page, console)
    page.locator(f"#draft-{draft_id}").get_by_role("button", name="Delete").click()
    page.wait_for_selector("#notice")
    screenshots.take(page, "draft deleted")
    assert page.locator("#none-waiting").count() == 1
    assert nothing_queued(console)
    assert smtp.received() == []


def test_hostile_subjects_and_bodies_are_shown_as_text(
    new_page: Callable[..., Page], console: Console, corpora: Path, screenshots: Screenshots
) -> None:
    entries = json.loads((corpora / "html/owasp/xss-filter-evasion-payloads.json").read_text())
    payloads = [e["payload"] for e in entries if "<" in e["payload"]][:20]
    for payload in payloads:
        kept(console, " ".join(payload.split())[:200], payload + "\n")
    page = new_page(PHONE)
    dialogs: list[Dialog] = []
    page.on("dialog", lambda dialog: dialogs.append(dialog))
    sign_in(page, console)
    assert page.locator("section.waiting-draft").count() == len(payloads)
    made = page.locator(".waiting-draft h2, .waiting-draft .message").locator(MADE_BY_PAYLOADS)
    assert made.count() == 0
    bodies = page.locator("pre.body").all_text_contents()
    assert all(any(p in b for b in bodies) for p in payloads)
    page.mouse.move(10, 10)
    page.mouse.move(200, 400)
    screenshots.take(page, "hostile drafts on a phone")
    assert dialogs == []
