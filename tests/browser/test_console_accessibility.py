"""Every page of the console checked by axe-core in Chromium on `mailfathom serve`, with
something on each to decide (a kept draft, a held send, an open mailbox change): the sign-in
form, the overview, the drafts waiting and a draft's edit form, the outbox and the mailbox
changes, at desktop and phone width, in English and Czech. None may have a serious or
critical finding, and none may scroll sideways on a phone."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest
from playwright.sync_api import Page

from browser.axe_core import Violation
from browser.chromium import DESKTOP, PHONE, Viewport
from browser.console import Console, served_console
from browser.fixtures import Screenshots
from log_audit import register_all
from mailfathom.app.confirmation.confirmed_sending import NobodyToAsk, Status
from mailfathom.app.drafting.composition import DraftRequest
from mailfathom.app.flags.set_mail_flags import FlagChangeRequest
from mailfathom.domain.access import ALL_PERMISSIONS, Caller, ConfirmationMode
from sync.helpers import sample, stored_rows

Axe = Callable[[Page], list[Violation]]
AGENT = Caller(ALL_PERMISSIONS, "agent", ConfirmationMode.ASK)
GUEST = "guest@example.net"
HEADINGS = {
    "en-US": ["Overview", "Waiting for you", "Edit the draft", "Outbox", "Mailbox changes"],
    "cs-CZ": ["Přehled", "Čeká na vás", "Úprava konceptu", "K odeslání", "Změny schránky"],
}


@dataclass(frozen=True)
class Decided:
    """A console with something on every page."""

    console: Console
    draft_id: str


@pytest.fixture(scope="module")
def decided(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Decided]:
    register_all(["Quarterly figures", "Held until the morning", "Flag me", GUEST])
    with served_console(tmp_path_factory.mktemp("accessible")) as console:
        with console.services() as services:
            drafting = services.drafting()
            request = DraftRequest(
                account="work",
                subject="Quarterly figures",
                to=[GUEST],
                plain_text_body="The figures are attached below.\n",
            )
            draft_id = str(drafting.save.save(AGENT, request).draft_id)
            kept = drafting.send.settle(AGENT, draft_id, NobodyToAsk(), None)
            assert kept.status is Status.DRAFT
            agent = Caller(ALL_PERMISSIONS, "agent")
            held = drafting.save.save(
                agent,
                DraftRequest(
                    account="work",
                    subject="Held until the morning",
                    to=[GUEST],
                    plain_text_body="Later.\n",
                ),
            )
            later = (datetime.now(UTC) + timedelta(days=1)).isoformat()
            drafting.send.send(agent, str(held.draft_id), later)
            services.connectors.local.folder("work", "INBOX").deliver(sample("Flag me"))
            account = services.config.account("work")
            assert account is not None
            services.account_synchronizer().run_once(account)
            (row,) = stored_rows(services, "work")
            services.flags().record(agent, FlagChangeRequest(str(row.stored_email_id), seen=True))
        yield Decided(console, draft_id)


# Each word of a table cell or a button whose pieces the page drew on more than one line
# (a word of up to 24 characters: longer ones, such as identifiers, may wrap anywhere).
BROKEN_WORDS = """() => {
  const broken = [];
  for (const cell of document.querySelectorAll("main th, main td, main button")) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const word of node.textContent.matchAll(/\\S+/g)) {
        if (word[0].length > 24) continue;
        const range = document.createRange();
        range.setStart(node, word.index);
        range.setEnd(node, word.index + word[0].length);
        const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
        if (lines.size > 1) broken.push(word[0]);
      }
    }
  }
  return broken;
}"""
# Pages checked by the same rules without a heading of their own in HEADINGS.
MORE_PATHS = ["/health", "/contacts", "/callers", "/calls", "/passkeys"]


def fits(page: Page, viewport: Viewport) -> bool:
    """No sideways scrolling; on a phone (whose scroll bars take no room) at its full width."""
    scrolled, shown = page.evaluate(
        "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    return bool(scrolled <= shown and (shown == viewport.width or not viewport.is_mobile))


@pytest.mark.parametrize("locale", sorted(HEADINGS))
@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_every_page_has_no_serious_finding_and_fits_the_screen(
    new_page: Callable[..., Page],
    decided: Decided,
    screenshots: Screenshots,
    axe: Axe,
    viewport: Viewport,
    locale: str,
) -> None:
    console = decided.console
    page = new_page(viewport, locale=locale)
    page.goto(console.url("/login"))
    checked = ["login"]
    axe(page)
    assert fits(page, viewport)
    screenshots.take(page, "login")
    page.locator("#password").fill(console.password)
    with page.expect_navigation():
        page.locator("button[type=submit]").click()
    paths = ["/", "/drafts", f"/drafts/{decided.draft_id}/edit", "/outbox", "/mutations"]
    for path, heading in zip(paths, HEADINGS[locale], strict=True):
        page.goto(console.url(path))
        assert page.locator("main h1").inner_text() == heading
        checked.append(_checked(page, path, viewport, screenshots, axe))
        if path == "/mutations":
            assert page.locator("main tbody tr").count() == 1
    for path in MORE_PATHS:
        page.goto(console.url(path))
        assert page.locator("main h1").count() == 1
        checked.append(_checked(page, path, viewport, screenshots, axe))
    assert len(checked) == 6 + len(MORE_PATHS)


def _checked(page: Page, path: str, viewport: Viewport, screenshots: Screenshots, axe: Axe) -> str:
    """`path` as shown on `page`, once axe finds nothing serious on it, it fits the screen
    and, on a desktop, no short word of a table or a button is split over two lines."""
    axe(page)
    assert fits(page, viewport), path
    if not viewport.is_mobile:
        assert page.evaluate(BROKEN_WORDS) == [], path
    screenshots.take(page, path)
    return path
