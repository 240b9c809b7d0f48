"""The console's health and contact pages in Chromium: a Dovecot account's folder deleted on
the server shown with its code and cleared by the next pass; a contact promoted, and one
erased through its confirmation page (gone from the page and from `list_contacts`); XSS
payloads as names and addresses shown as text (checked in the DOM); axe on every page at
desktop and phone width, with screenshots of each step."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import Dialog, Page

from browser.axe_core import Violation
from browser.chromium import PHONE
from browser.fixtures import Screenshots
from browser.test_console_outbox import fits_a_phone, served, sign_in
from console.conftest import console_config
from log_audit import register_all
from mailfathom.adapters.sql.contacts import SqlContactBook
from mailfathom.bootstrap import Services
from mailfathom.domain.access import ALL_PERMISSIONS, Caller
from mailfathom.domain.config import FolderMapping
from mailfathom.domain.contact_collection import SeenPerson
from mailfathom.domain.errors import Refusal
from mailfathom.domain.folders import FolderRole
from servers.dovecot import DovecotServer, ImapAccount
from sync.helpers import imap_account_config, open_services, sample

Axe = Callable[[Page], list[Violation]]
AGENT = Caller(ALL_PERMISSIONS, "agent")
MADE_BY_PAYLOADS = "script, img, svg, iframe, object, embed, math, video, audio, a, style, link"


def _both_widths(
    page: Page, phone: Page, url: str, screenshots: Screenshots, axe: Axe, name: str
) -> None:
    """The page at `url` checked by axe on a desktop and on a phone, where it must not
    scroll sideways."""
    for shown, width in ((page, "desktop"), (phone, "phone")):
        shown.goto(url)
        screenshots.take(shown, f"{name} {width}")
        axe(shown)
    assert fits_a_phone(phone)


def test_a_folder_gone_from_dovecot_is_shown_by_code_and_cleared(
    page: Page,
    new_page: Callable[..., Page],
    tmp_path: Path,
    imap_account: ImapAccount,
    dovecot: DovecotServer,
    screenshots: Screenshots,
    axe: Axe,
) -> None:
    dovecot.create_folder(imap_account.username, "Projects")
    dovecot.save_message(imap_account.username, sample("Fresh mail"))
    account = imap_account_config(
        imap_account,
        folders=(
            FolderMapping("INBOX", "INBOX", FolderRole.INBOX),
            FolderMapping("Projects", "Projects"),
        ),
    )
    with open_services(tmp_path, account) as services, served(services) as (origin, password):
        sync = services.account_synchronizer()
        sync.run_once(account)
        sign_in(page, origin, password)
        phone = new_page(PHONE)
        sign_in(phone, origin, password)
        _both_widths(page, phone, origin + "/health", screenshots, axe, "fresh")
        section = page.locator(f"#account-{account.account_id}")
        projects = section.locator('tr[data-alias="Projects"]')
        assert projects.locator("td.failure").inner_text() == "none"
        assert projects.locator("td.progress").inner_text().endswith("ago)")

        dovecot.doveadm("mailbox", "delete", "-u", imap_account.username, "Projects")
        sync.run_once(account)
        _both_widths(page, phone, origin + "/health", screenshots, axe, "folder gone")
        assert projects.locator("td.failure .code").inner_text() == "31006"
        assert section.locator('tr[data-alias="INBOX"] td.failure').inner_text() == "none"

        dovecot.create_folder(imap_account.username, "Projects")
        sync.run_once(account)
        page.reload()
        screenshots.take(page, "cleared")
        assert projects.locator("td.failure").inner_text() == "none"


def _agent_wrote(services: Services, name: str, address: str) -> uuid.UUID:
    written = services.contacts().creation.create(AGENT, name, [address], address)
    assert written.contact is not None
    return written.contact.contact_id


def _collected(services: Services, name: str, address: str) -> uuid.UUID:
    book = SqlContactBook(services.engine)
    assert book.collect([SeenPerson(address, name)], services.clock()) == 1
    found = book.find_by_address(address)
    assert found is not None
    return found.contact_id


def test_promote_and_erase_a_contact(
    page: Page,
    new_page: Callable[..., Page],
    tmp_path: Path,
    screenshots: Screenshots,
    axe: Axe,
) -> None:
    register_all(["Ann Agent", "ann@example.net", "Carla Collected", "carla@example.org"])
    with Services.open(console_config(tmp_path)) as services:
        agent = _agent_wrote(services, "Ann Agent", "ann@example.net")
        collected = _collected(services, "Carla Collected", "carla@example.org")
        with served(services) as (origin, password):
            sign_in(page, origin, password)
            phone = new_page(PHONE)
            sign_in(phone, origin, password)
            _both_widths(page, phone, origin + "/contacts", screenshots, axe, "the book")

            carla = page.locator(f"#contact-{collected}")
            assert carla.get_attribute("data-origin") == "collected"
            with page.expect_navigation():
                carla.get_by_role("button", name="Promote").click()
            assert page.locator("#notice").inner_text() == (
                "The contact is asserted now, and its addresses are vouched for."
            )
            assert carla.get_attribute("data-origin") == "asserted"
            screenshots.take(page, "promoted")
            axe(page)

            with page.expect_navigation():
                page.locator(f"#contact-{agent} a.erase").click()
            assert page.url == f"{origin}/contacts/{agent}/erase"
            _both_widths(page, phone, page.url, screenshots, axe, "erase asks")
            # The box is required: the browser keeps the form until it is ticked.
            page.get_by_role("button", name="Erase").click()
            assert page.url == f"{origin}/contacts/{agent}/erase"
            page.get_by_label("Yes, erase this contact and its addresses").check()
            with page.expect_navigation():
                page.get_by_role("button", name="Erase").click()
            assert page.locator("#notice").inner_text() == (
                "The contact was erased, with 1 address(es)."
            )
            assert page.locator(f"#contact-{agent}").count() == 0
            screenshots.take(page, "erased")
            axe(page)

        listed = services.contacts().listing.list(AGENT)
        assert [c.contact_id for c in listed.contacts] == [collected]


def test_hostile_names_and_addresses_are_shown_as_text(
    new_page: Callable[..., Page],
    tmp_path: Path,
    corpora: Path,
    screenshots: Screenshots,
    axe: Axe,
) -> None:
    entries = json.loads((corpora / "html/owasp/xss-filter-evasion-payloads.json").read_text())
    payloads = [e["payload"] for e in entries if "<" in e["payload"]][:40]
    page = new_page()
    dialogs: list[Dialog] = []
    page.on("dialog", lambda dialog: dialogs.append(dialog))
    with Services.open(console_config(tmp_path)) as services:
        names: list[str] = []
        for number, payload in enumerate(payloads):
            name = " ".join(payload.split())[:200]
            try:
                _agent_wrote(services, name, f"agent{number}@example.net")
            except Refusal:
                continue  # a name the book's rules turn down (a control character)
            names.append(name)
        addresses = [f"{' '.join(p.split())[:200]}@example.org" for p in payloads[:10]]
        for number, address in enumerate(addresses):
            _collected(services, f"Collected {number}", address)
        register_all([*names, *addresses])
        assert len(names) >= 15
        with served(services) as (origin, password):
            sign_in(page, origin, password)
            page.goto(origin + "/contacts")
            shown = page.locator("th.name, li.address")
            assert shown.locator(MADE_BY_PAYLOADS).count() == 0
            texts = shown.all_text_contents()
            assert all(n in texts for n in names)
            assert all(a in texts for a in addresses)
            page.mouse.move(10, 10)
            page.mouse.move(400, 500)
            screenshots.take(page, "hostile contacts")
            axe(page)
            with page.expect_navigation():
                page.locator("a.erase").first.click()
            assert page.locator("h2.name, li.address").locator(MADE_BY_PAYLOADS).count() == 0
            screenshots.take(page, "hostile erase page")
    assert dialogs == []
