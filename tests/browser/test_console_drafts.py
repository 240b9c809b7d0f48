"""The console's "Waiting for you" page in Chromium, over a deployment whose account submits
to the capture SMTP server: a kept draft approved reaches the server exactly as the page
showed it; a draft edited after it was shown is refused and nothing reaches it; Delete takes
the draft away; hostile mail text stays text in the DOM and never opens a dialog."""

from __future__ import annotations

import email
import email.policy
import json
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from email.message import EmailMessage
from pathlib import Path

import pytest
import uvicorn
from playwright.sync_api import Dialog, Page

from browser.axe_core import Violation
from browser.chromium import PHONE
from browser.fixtures import Screenshots
from log_audit import register_all
from mailfathom.app.confirmation.confirmed_sending import NobodyToAsk, Status
from mailfathom.app.drafting.composition import DraftRequest
from mailfathom.domain.access import ALL_PERMISSIONS, Caller, ConfirmationMode
from mailfathom.entrypoints.console.pages import ConsoleUseCases, build_console_app
from mcp_tests.deployment import _free_port
from sending.helpers import SMTP_PASSWORD, SMTP_USER, SendingDeployment, open_deployment
from servers.smtp import SmtpServer

AGENT = Caller(ALL_PERMISSIONS, "agent", ConfirmationMode.ASK)
FRIEND = "friend@example.net"
PASSWORD = "owner-drafts-password-7351"
Axe = Callable[[Page], list[Violation]]
MADE_BY_PAYLOADS = "script, img, svg, iframe, object, embed, math, video, audio, a, style, link"


@pytest.fixture
def smtp() -> Iterator[SmtpServer]:
    server = SmtpServer({SMTP_USER: SMTP_PASSWORD}).start()
    yield server
    server.close()


@pytest.fixture
def deployment(
    tmp_path: Path, smtp: SmtpServer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[SendingDeployment]:
    yield from open_deployment(tmp_path, smtp, monkeypatch, mail_delivery="HoldSeconds = 0")


@contextmanager
def console_of(d: SendingDeployment) -> Iterator[str]:
    """The deployment's console on a loopback port, in this process, until the block ends:
    its origin."""
    register_all([PASSWORD])
    d.services.console_access().set_password(PASSWORD)
    app = build_console_app(
        ConsoleUseCases(
            d.services.console_access,
            d.services.console_overview,
            drafts=d.services.console_drafts,
            account_names=d.services.account_names,
        ),
        "127.0.0.1",
    )
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def kept(d: SendingDeployment, subject: str, body: str) -> str:
    register_all([subject, body, FRIEND])
    request = DraftRequest(account="work", subject=subject, to=[FRIEND], plain_text_body=body)
    drafting = d.services.drafting()
    draft_id = str(drafting.save.save(AGENT, request).draft_id)
    assert drafting.send.settle(AGENT, draft_id, NobodyToAsk(), None).status is Status.DRAFT
    return draft_id


def sign_in(page: Page, origin: str) -> None:
    page.goto(origin + "/login")
    page.locator("#password").fill(PASSWORD)
    with page.expect_navigation():
        page.locator("button[type=submit]").click()
    page.goto(origin + "/drafts")


def deliver(d: SendingDeployment, smtp: SmtpServer) -> list[tuple[list[str], EmailMessage]]:
    """One delivery pass, in a thread of its own (Playwright's loop holds this one), and
    what the SMTP server received."""
    with ThreadPoolExecutor(1) as worker:
        worker.submit(d.services.delivery_pass(tls_context=smtp.client_context).run_once).result()
    messages = []
    for received in smtp.received():
        message = email.message_from_bytes(received.content, policy=email.policy.default)
        assert isinstance(message, EmailMessage)
        messages.append((received.rcpt_tos, message))
    return messages


def test_an_approved_draft_reaches_the_server_exactly_as_shown(
    page: Page, deployment: SendingDeployment, smtp: SmtpServer, screenshots: Screenshots, axe: Axe
) -> None:
    d = deployment
    draft_id = kept(d, "Quarterly plan", "Here is the plan\u202e.\nSee you.\n")
    with console_of(d) as origin:
        sign_in(page, origin)
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
    ((rcpt_tos, message),) = deliver(d, smtp)
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


def test_a_draft_edited_after_it_was_shown_is_refused_and_nothing_sent(
    page: Page, deployment: SendingDeployment, smtp: SmtpServer, screenshots: Screenshots
) -> None:
    d = deployment
    draft_id = kept(d, "First words", "First.\n")
    with console_of(d) as origin:
        sign_in(page, origin)
        register_all(["Changed by an agent"])
        d.services.drafting().update.update(
            AGENT,
            draft_id,
            DraftRequest(
                account="work", subject="Changed by an agent", to=[FRIEND], plain_text_body="x\n"
            ),
        )
        page.locator(f"#draft-{draft_id}").get_by_role("button", name="Send").click()
        page.wait_for_selector("#notice")
        screenshots.take(page, "draft changed since shown")
        assert "changed" in page.locator("#notice").inner_text()
        title = page.locator(f"#draft-{draft_id} h2").inner_text()
        assert title == "Changed by an agent"
    assert deliver(d, smtp) == []


def test_delete_takes_the_draft_away(
    page: Page, deployment: SendingDeployment, smtp: SmtpServer, screenshots: Screenshots
) -> None:
    d = deployment
    draft_id = kept(d, "Not wanted", "Bin it.\n")
    with console_of(d) as origin:
        sign_in(page, origin)
        page.locator(f"#draft-{draft_id}").get_by_role("button", name="Delete").click()
        page.wait_for_selector("#notice")
        screenshots.take(page, "draft deleted")
        assert page.locator("#none-waiting").count() == 1
    assert deliver(d, smtp) == []


def test_hostile_subjects_and_bodies_are_shown_as_text(
    new_page: Callable[..., Page],
    deployment: SendingDeployment,
    corpora: Path,
    screenshots: Screenshots,
) -> None:
    d = deployment
    entries = json.loads((corpora / "html/owasp/xss-filter-evasion-payloads.json").read_text())
    payloads = [e["payload"] for e in entries if "<" in e["payload"]][:20]
    for payload in payloads:
        kept(d, " ".join(payload.split())[:200], payload + "\n")
    page = new_page(PHONE)
    dialogs: list[Dialog] = []
    page.on("dialog", lambda dialog: dialogs.append(dialog))
    with console_of(d) as origin:
        sign_in(page, origin)
        assert page.locator("section.waiting-draft").count() == len(payloads)
        made = page.locator(".waiting-draft h2, .waiting-draft .message").locator(MADE_BY_PAYLOADS)
        assert made.count() == 0
        bodies = page.locator("pre.body").all_text_contents()
        assert all(any(p in b for b in bodies) for p in payloads)
        page.mouse.move(10, 10)
        page.mouse.move(200, 400)
        screenshots.take(page, "hostile drafts on a phone")
    assert dialogs == []
