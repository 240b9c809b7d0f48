"""The console's callers and recent-calls pages in Chromium over the real `mailfathom
serve`: a key created by its button is shown once (a reload shows it no more), calls a tool
with the official MCP client, is revoked by its button, and its next call is refused; the
calls page lists the calls; both pages checked by axe at desktop and phone width."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx2
from playwright.sync_api import Page

from browser.axe_core import Violation
from browser.chromium import PHONE
from browser.fixtures import Screenshots
from console.served_keys import Served, served_with_console
from log_audit import register
from mcp_tests.client import call, code
from mcp_tests.hardened import initialize

Axe = Callable[[Page], list[Violation]]


def _sign_in(page: Page, served: Served) -> None:
    page.goto(served.origin + "/login")
    page.locator("#password").fill(served.password)
    with page.expect_navigation():
        page.locator("button[type=submit]").click()
    assert page.url == served.origin + "/"


def _call_code(served: Served, key: str) -> int | None:
    """The code of a list_accounts call made with the official MCP client, from a thread of
    its own: Playwright's synchronous API holds this thread's event loop."""
    with ThreadPoolExecutor(1) as thread:
        return thread.submit(lambda: code(call(served.mcp_url, key, "list_accounts"))).result()


def _fits_a_phone(page: Page) -> bool:
    widths = page.evaluate(
        "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    return bool(widths[0] <= widths[1] == 360)


def test_a_key_created_in_the_console_is_shown_once_and_refused_once_revoked(
    page: Page,
    new_page: Callable[..., Page],
    tmp_path: Path,
    screenshots: Screenshots,
    axe: Axe,
) -> None:
    with served_with_console(tmp_path) as served:
        _sign_in(page, served)
        page.goto(served.origin + "/callers")
        reader = page.locator("#caller-reader")
        assert reader.locator(".confirmation").get_attribute("data-confirmation") == "ask"
        assert reader.locator(".permissions li").all_inner_texts() == ["mailfathom.mail.read"]
        screenshots.take(page, "callers")
        axe(page)

        with page.expect_navigation():
            page.get_by_role("button", name="Create a key for reader").click()
        key = page.locator("#new-key").input_value()
        register(key)
        assert key.startswith("mf-k")
        screenshots.take(page, "key shown once")
        axe(page)
        page.reload()
        assert page.locator("#new-key").count() == 0
        assert key not in page.content()
        assert "already used" in page.locator("#notice").inner_text()
        screenshots.take(page, "after reload")

        assert _call_code(served, key) is None

        page.goto(served.origin + "/callers")
        key_id = key.removeprefix("mf-k").split("-", 1)[0]
        row = page.locator(f"#key-{key_id}")
        with page.expect_navigation():
            row.get_by_role("button", name=f"Revoke key k{key_id}").click()
        assert "refused" in page.locator("#notice").inner_text()
        assert page.locator(f"#key-{key_id}").count() == 0
        screenshots.take(page, "revoked")
        axe(page)
        with httpx2.Client(timeout=30) as http:
            refused = initialize(http, served.mcp_url, key)
        assert refused.status_code == 401
        assert refused.headers["www-authenticate"].startswith('Bearer error="invalid_token"')

        page.goto(served.origin + "/calls")
        first = page.locator("#calls tbody tr").first
        assert first.locator(".tool").inner_text() == "list_accounts"
        assert first.locator(".caller").inner_text() == "reader"
        assert first.get_attribute("data-outcome") == "success"
        assert first.locator(".outcome").inner_text() == "Answered"
        screenshots.take(page, "recent calls")
        axe(page)

        phone = new_page(PHONE)
        _sign_in(phone, served)
        for path in ("/callers", "/calls"):
            phone.goto(served.origin + path)
            screenshots.take(phone, f"phone {path}")
            assert _fits_a_phone(phone)
            axe(phone)
