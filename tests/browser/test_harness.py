"""The browser harness itself, on pages this test serves on loopback: Chromium clicks,
screenshots are kept, and axe-core reports what is wrong with a page and nothing on a sound
one, under a strict Content-Security-Policy too."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from playwright.sync_api import Page, sync_playwright

from browser.axe_core import AccessibilityFailure, Violation
from browser.chromium import PHONE, Chromium
from browser.fixtures import Screenshots
from browser.served import Answer, serve

Axe = Callable[[Page], list[Violation]]

SOUND = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sound</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><main><h1>Sound</h1>
<form method="post" action="/done"><label for="name">Name</label>
<input id="name" name="name" type="text"><button type="submit">Save</button></form>
</main></body></html>"""

# No language, an image without a text alternative, a field without a label, and grey on
# white too faint to read.
FAULTY = """<!doctype html>
<html><head><meta charset="utf-8"><title>Faulty</title></head>
<body><main><h1>Faulty</h1><img src="/logo.png"><input type="text" name="name">
<p style="color:#eeeeee;background:#ffffff">faint words</p></main></body></html>"""

CLICKING = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Clicking</title></head>
<body><main><h1 id="state">Not clicked</h1>
<button type="button" onclick="document.getElementById('state').textContent = 'Clicked'">
Click</button></main></body></html>"""

STRICT_POLICY = {
    "Content-Security-Policy": "default-src 'none'; style-src 'self'; script-src 'self'; "
    "img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
}


def test_a_click_changes_the_page_and_the_screenshot_is_kept(
    page: Page, screenshots: Screenshots, request: pytest.FixtureRequest
) -> None:
    with serve({"/": Answer(CLICKING)}) as site:
        page.goto(site.url("/"))
        before = screenshots.take(page, "before click")
        page.get_by_role("button", name="Click").click()
        assert page.locator("#state").inner_text() == "Clicked"
        after = screenshots.take(page, "after click")
    assert [p.name for p in screenshots.taken] == ["01-before-click.png", "02-after-click.png"]
    for shot in (before, after):
        assert shot.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
        assert shot.parent == screenshots.directory
    assert before.read_bytes() != after.read_bytes()
    assert request.node.get_closest_marker("browser") is not None
    assert request.node.get_closest_marker("process") is not None


def test_a_form_posts_what_was_typed(page: Page) -> None:
    with serve({"/": Answer(SOUND), "/done": Answer("<title>done</title>")}) as site:
        page.goto(site.url("/"))
        page.get_by_label("Name").fill("Ada")
        page.get_by_role("button", name="Save").click()
        page.wait_for_url(site.url("/done"))
    assert [(r.method, r.path, r.body) for r in site.requests if r.path != "/favicon.ico"] == [
        ("GET", "/", b""),
        ("POST", "/done", b"name=Ada"),
    ]


def test_axe_fails_a_faulty_page_and_names_each_finding(page: Page, axe: Axe) -> None:
    with serve({"/": Answer(FAULTY)}) as site:
        page.goto(site.url("/"))
        with pytest.raises(AccessibilityFailure) as failure:
            axe(page)
    rules = {v.rule: v.impact for v in failure.value.violations}
    assert rules == {
        "html-has-lang": "serious",
        "image-alt": "critical",
        "label": "critical",
        "color-contrast": "serious",
    }
    assert "image-alt (critical)" in str(failure.value)


@pytest.mark.parametrize("policy", [{}, STRICT_POLICY], ids=["no-policy", "strict-policy"])
def test_axe_finds_nothing_on_a_sound_page(page: Page, axe: Axe, policy: dict[str, str]) -> None:
    """axe-core is given to the page through the browser, so a strict policy does not stop it
    (and a page's policy is never loosened for the check)."""
    with serve({"/": Answer(SOUND, headers=policy)}) as site:
        page.goto(site.url("/"))
        assert axe(page) == []


def test_a_phone_page_is_narrow_and_touch(new_page: Callable[..., Page]) -> None:
    phone = new_page(PHONE)
    with serve({"/": Answer(SOUND)}) as site:
        phone.goto(site.url("/"))
        width, touch = phone.evaluate("() => [window.innerWidth, navigator.maxTouchPoints > 0]")
    assert (width, touch) == (360, True)


def test_a_coroutine_runs_once_the_browser_is_let_go(chromium: Chromium) -> None:
    """Each test holds Playwright only while it runs: its loop, marked running in the
    thread, is gone afterwards, so the tests after a browser test can run coroutines."""
    with sync_playwright() as playwright:
        connected = playwright.chromium.connect_over_cdp(chromium.endpoint)
        assert connected.new_page().evaluate("() => 6 * 7") == 42
        waiting = _answer()
        with pytest.raises(RuntimeError, match="running event loop"):
            asyncio.run(waiting)
        waiting.close()
        connected.close()
    assert asyncio.run(_answer()) == 42


async def _answer() -> int:
    await asyncio.sleep(0)
    return 42
