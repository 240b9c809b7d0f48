"""Signing in to the owner's console in Chromium: the real form, the cookie as the browser
holds it, keyboard only, a phone, accessibility, and a form of another origin refused."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from playwright.sync_api import Page, Response

from browser.axe_core import Violation
from browser.chromium import PHONE
from browser.console import Console, served_console
from browser.fixtures import Screenshots
from browser.served import Answer, serve

Axe = Callable[[Page], list[Violation]]
COOKIE = "mf_console"


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Console]:
    with served_console(tmp_path_factory.mktemp("console")) as served:
        yield served


def sign_in(page: Page, console: Console, password: str | None = None) -> Response | None:
    page.goto(console.url("/login"))
    page.locator("#password").fill(console.password if password is None else password)
    with page.expect_navigation() as navigation:
        page.locator("button[type=submit]").click()
    return navigation.value


def on_overview(page: Page, console: Console) -> bool:
    """Whether the page shows the overview, not the sign-in form."""
    return page.url == console.url("/") and page.locator("#password").count() == 0


def test_the_owner_signs_in_through_the_form(
    page: Page, console: Console, screenshots: Screenshots
) -> None:
    page.goto(console.url("/login"))
    screenshots.take(page, "login")
    sign_in(page, console)
    assert on_overview(page, console)
    assert page.locator("main h1").count() == 1
    screenshots.take(page, "overview")


def test_a_wrong_password_shows_an_error_and_signs_nobody_in(
    page: Page, console: Console, screenshots: Screenshots
) -> None:
    answer = sign_in(page, console, "not-" + console.password)
    screenshots.take(page, "wrong password")
    assert answer is not None
    assert not on_overview(page, console)
    assert page.locator("#password").is_visible()
    error = page.get_by_role("alert")
    assert error.count() == 1
    assert error.inner_text().strip() != ""
    page.goto(console.url("/"))
    assert page.url == console.url("/login")


def test_the_browser_holds_the_session_cookie_httponly_and_samesite_strict(
    page: Page, console: Console
) -> None:
    sign_in(page, console)
    assert on_overview(page, console)
    (cookie,) = [c for c in page.context.cookies() if c["name"] == COOKIE]
    assert cookie["httpOnly"] is True
    assert cookie["sameSite"] == "Strict"
    assert cookie["path"] == "/"
    assert cookie["secure"] is False
    assert COOKIE not in page.evaluate("() => document.cookie")


def test_the_session_id_is_replaced_at_sign_in(page: Page, console: Console) -> None:
    page.goto(console.url("/login"))
    before = {c["value"] for c in page.context.cookies() if c["name"] == COOKIE}
    sign_in(page, console)
    after = {c["value"] for c in page.context.cookies() if c["name"] == COOKIE}
    assert on_overview(page, console)
    assert len(after) == 1
    assert not before & after


def test_the_login_and_overview_pages_have_no_serious_accessibility_finding(
    page: Page, console: Console, axe: Axe
) -> None:
    page.goto(console.url("/login"))
    axe(page)
    sign_in(page, console)
    assert on_overview(page, console)
    axe(page)


def test_the_keyboard_alone_reaches_the_password_then_the_button_and_enter_signs_in(
    page: Page, console: Console, screenshots: Screenshots
) -> None:
    page.goto(console.url("/login"))
    order: list[str] = []
    for _ in range(20):
        page.keyboard.press("Tab")
        order.append(
            page.evaluate(
                "() => { const e = document.activeElement;"
                " return e ? `${e.tagName.toLowerCase()}#${e.id}[${e.type || ''}]` : ''; }"
            )
        )
        if order[-1].startswith("input#password"):
            break
    assert order[-1] == "input#password[password]", order
    screenshots.take(page, "password focused")
    page.keyboard.press("Tab")
    focused = page.evaluate("() => [document.activeElement.tagName, document.activeElement.type]")
    assert focused == ["BUTTON", "submit"]
    page.keyboard.press("Shift+Tab")
    page.keyboard.type(console.password)
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert on_overview(page, console)
    screenshots.take(page, "signed in by keyboard")


@pytest.mark.parametrize("path", ["/login", "/"])
def test_a_phone_shows_each_page_without_scrolling_sideways(
    new_page: Callable[..., Page], console: Console, screenshots: Screenshots, path: str
) -> None:
    phone = new_page(PHONE)
    if path == "/":
        sign_in(phone, console)
    phone.goto(console.url(path))
    screenshots.take(phone, f"phone {path}")
    widths = phone.evaluate(
        "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    assert widths[0] <= widths[1] == 360


def _auto_post(action: str, fields: dict[str, str]) -> str:
    inputs = "".join(f'<input type="hidden" name="{n}" value="{v}">' for n, v in fields.items())
    return (
        '<!doctype html><html lang="en"><head><title>Prize</title></head><body>'
        f'<form id="f" method="post" action="{action}">{inputs}</form>'
        "<script>document.getElementById('f').submit()</script></body></html>"
    )


def test_a_form_of_another_origin_cannot_sign_the_owner_out(
    page: Page, console: Console, screenshots: Screenshots
) -> None:
    """127.0.0.1 on another port is the same site, so SameSite=Strict lets the cookie go with
    the post: the console's own origin check is what refuses it."""
    sign_in(page, console)
    assert on_overview(page, console)
    attack = {"/": Answer(_auto_post(console.url("/logout"), {"csrf": "guessed"}))}
    with serve(attack) as other:
        with page.expect_response(console.url("/logout")) as refused:
            page.goto(other.url("/"))
        screenshots.take(page, "refused post")
    assert refused.value.status == 403
    assert refused.value.request.headers.get("origin") == other.origin
    page.goto(console.url("/"))
    assert on_overview(page, console)


def test_a_form_of_another_origin_cannot_sign_anyone_in(page: Page, console: Console) -> None:
    page.goto(console.url("/login"))
    attack = {"/": Answer(_auto_post(console.url("/login"), {"password": console.password}))}
    with serve(attack) as other, page.expect_response(console.url("/login")) as refused:
        page.goto(other.url("/"))
    assert refused.value.request.method == "POST"
    assert refused.value.status == 403
    page.goto(console.url("/"))
    assert page.url == console.url("/login")
