"""The console's outbox and mailbox changes in Chromium, over real servers: a held send
cancelled (by keyboard alone) and the capture SMTP server then receives nothing from the
delivery pass; a dead-lettered flag change retried and the Dovecot folder then holds it;
both pages checked by axe and on a phone.

The console runs in this process on a loopback port (its own server, as `serve` runs it,
open pages live), over the same Services the test drives the delivery pass and the
synchronization run with, so the test moves the deployment's clock and runs each pass exactly
when it means to: `mailfathom serve` would run them on its own clock."""

from __future__ import annotations

import socket
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

import pytest
from playwright.sync_api import Page

from browser.axe_core import Violation
from browser.chromium import PHONE
from browser.fixtures import Screenshots
from log_audit import register
from mailfathom.app.drafting.composition import DraftRequest
from mailfathom.app.flags.set_mail_flags import FlagChangeRequest
from mailfathom.bootstrap import Services
from mailfathom.domain.access import ALL_PERMISSIONS, Caller
from mailfathom.domain.config import SyncMode
from mailfathom.domain.mutations import MutationFailure, MutationState
from mailfathom.domain.outgoing import Stage
from mailfathom.entrypoints.console.serving import console_server, console_use_cases
from sending.helpers import SMTP_PASSWORD, SMTP_USER, SendingDeployment
from sending.helpers import open_deployment as open_sending
from servers.dovecot import ImapAccount
from servers.smtp import SmtpServer
from sync.helpers import RemoteMailbox, imap_account_config, open_services, sample, stored_rows
from waiting import wait_for

Axe = Callable[[Page], list[Violation]]
AGENT = Caller(ALL_PERMISSIONS, "agent")


@contextmanager
def served(services: Services) -> Iterator[tuple[str, str]]:
    """The console over `services` on a loopback port, with an owner password set: its
    origin and the password."""
    password = "owner-" + uuid.uuid4().hex
    register(password)
    services.console_access().set_password(password)
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    server = console_server(console_use_cases(services), "127.0.0.1", listener)
    thread = threading.Thread(target=server.run, args=([listener],), daemon=True)
    thread.start()
    try:
        wait_for(lambda: server.started, "the console listens")
        yield f"http://127.0.0.1:{port}", password
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def sign_in(page: Page, origin: str, password: str) -> None:
    page.goto(origin + "/login")
    page.locator("#password").fill(password)
    with page.expect_navigation():
        page.locator("button[type=submit]").click()
    assert page.url == origin + "/"


def fits_a_phone(page: Page) -> bool:
    widths = page.evaluate(
        "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    return bool(widths[0] <= widths[1] == 360)


@pytest.fixture
def smtp() -> Iterator[SmtpServer]:
    server = SmtpServer({SMTP_USER: SMTP_PASSWORD}).start()
    yield server
    server.close()


@pytest.fixture
def sending(
    tmp_path: Path, smtp: SmtpServer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[SendingDeployment]:
    yield from open_sending(tmp_path, smtp, monkeypatch)


def _held_send(services: Services, hours: float) -> uuid.UUID:
    recipient = f"held-{uuid.uuid4().hex[:10]}@example.net"
    register(recipient)
    uses = services.drafting()
    request = DraftRequest(
        plain_text_body="Held for later.", account="work", subject="Later", to=[recipient]
    )
    saved = uses.save.save(AGENT, request)
    instant = services.clock() + timedelta(hours=hours)
    return uses.send.send(AGENT, str(saved.draft_id), instant.isoformat()).outgoing_id


def _focus_by_tab(page: Page, wanted: str, presses: int = 40) -> None:
    """Press Tab until the focused element matches the selector `wanted`."""
    for _ in range(presses):
        page.keyboard.press("Tab")
        if page.evaluate("(s) => document.activeElement.matches(s)", wanted):
            return
    raise AssertionError(f"Tab never reached {wanted}")


def test_a_held_send_cancelled_by_keyboard_is_never_offered_to_smtp(
    page: Page,
    new_page: Callable[..., Page],
    sending: SendingDeployment,
    screenshots: Screenshots,
    axe: Axe,
) -> None:
    services, clock, smtp = sending.services, sending.clock, sending.smtp
    assert smtp is not None
    held = _held_send(services, 2)
    with served(services) as (origin, password):
        sign_in(page, origin, password)
        page.goto(origin + "/outbox")
        row = page.locator(f"#send-{held}")
        assert row.get_attribute("data-state") == "held"
        screenshots.take(page, "outbox with a held send")
        axe(page)

        _focus_by_tab(page, f"#send-{held} button[type=submit]")
        screenshots.take(page, "cancel focused")
        with page.expect_navigation():
            page.keyboard.press("Enter")
        assert page.locator("#notice").inner_text() == (
            "The send was cancelled; it will not be sent."
        )
        assert row.get_attribute("data-state") == "cancelled"
        assert row.locator("button").count() == 0
        screenshots.take(page, "cancelled")
        axe(page)

        phone = new_page(PHONE)
        sign_in(phone, origin, password)
        phone.goto(origin + "/outbox")
        screenshots.take(phone, "phone outbox")
        assert fits_a_phone(phone)

    clock.advance(3 * 3600)
    delivery = services.delivery_pass(tls_context=smtp.client_context)
    assert delivery.run_once().claimed == 0
    assert smtp.received() == []
    record = services.outbox().find(held)
    assert record is not None
    assert record.stage is Stage.CANCELLED


@pytest.fixture
def remote(imap_account: ImapAccount) -> Iterator[RemoteMailbox]:
    mailbox = RemoteMailbox(imap_account)
    yield mailbox
    mailbox.close()


def test_a_dead_lettered_change_retried_in_the_console_reaches_dovecot(
    page: Page,
    new_page: Callable[..., Page],
    tmp_path: Path,
    imap_account: ImapAccount,
    remote: RemoteMailbox,
    screenshots: Screenshots,
    axe: Axe,
) -> None:
    uid = remote.append(sample("Retried from the console"))
    account = imap_account_config(
        imap_account, sync_mode=SyncMode.PUSH, poll_interval_seconds=3600.0
    )
    with open_services(tmp_path, account) as services:
        sync = services.account_synchronizer()
        sync.run_once(account)
        (row,) = stored_rows(services, account.account_id)
        recorded = services.flags().record(
            AGENT, FlagChangeRequest(str(row.stored_email_id), seen=True)
        )
        (record,) = recorded.records
        remote.store(uid, "+FLAGS", "\\Flagged")
        sync.run_once(account)
        dead = services.mutations().find(record.record_id)
        assert dead is not None
        assert dead.state is MutationState.DEAD_LETTERED
        assert "\\Seen" not in remote.flags()[uid]

        with served(services) as (origin, password):
            sign_in(page, origin, password)
            page.goto(origin + "/mutations")
            shown = page.locator(f"#change-{record.record_id}")
            assert shown.get_attribute("data-state") == "dead-lettered"
            assert shown.locator(".code").inner_text() == str(
                int(MutationFailure.CHANGED_ON_SERVER)
            )
            screenshots.take(page, "dead-lettered change")
            axe(page)
            with page.expect_navigation():
                shown.get_by_role("button").click()
            assert shown.get_attribute("data-state") == "pending"
            screenshots.take(page, "retried")
            axe(page)

            phone = new_page(PHONE)
            sign_in(phone, origin, password)
            phone.goto(origin + "/mutations")
            screenshots.take(phone, "phone mutations")
            assert fits_a_phone(phone)

        sync.run_once(account)
        assert "\\Seen" in remote.flags()[uid]
        ended = services.mutations().find(record.record_id)
        assert ended is not None
        assert ended.state is MutationState.COMPLETED
