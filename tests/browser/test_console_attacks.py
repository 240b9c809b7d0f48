"""Attacks on the owner's console from a browser, in Chromium: a session cookie planted
before sign-in (session fixation), a page of another origin using the owner's cookie to
read the console or act with it, wrong passwords one after another (the bound, and the page
that says how long to wait), and a page of another origin auto-submitting a form to the
console (CSRF). Each ends with what the owner's session and the store still hold.

The console and the attacker's page run on loopback ports: `127.0.0.1` and `localhost` are
different sites, two ports of one host are the same site but different origins, and the
tests try both, since `SameSite=Strict` keeps the cookie from only the first."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page

from browser.axe_core import Violation
from browser.chromium import PHONE
from browser.fixtures import Screenshots
from browser.owner_console import OwnerConsole, VirtualAuthenticator, owner_console
from browser.served import Answer, serve
from mailfathom.domain.console import FREE_FAILURES_PER_CLIENT

Axe = Callable[[Page], list[Violation]]
COOKIE = "mf_console"
BLANK = "<!doctype html><html lang='en'><title>Prize</title><p>You won</p></html>"
# Run on the attacker's page: read a console page with the owner's cookie, and post to it.
READ_AND_POST = """async ([target, action]) => {
  let read;
  try {
    const page = await fetch(target, {credentials: 'include'});
    read = 'read:' + (await page.text()).length;
  } catch (e) { read = 'blocked:' + e.name; }
  let posted;
  try {
    await fetch(action, {method: 'POST', mode: 'no-cors', credentials: 'include',
      body: new URLSearchParams({csrf: 'guessed'})});
    posted = 'sent';
  } catch (e) { posted = 'blocked:' + e.name; }
  return [read, posted];
}"""


@pytest.fixture
def console(tmp_path: Path) -> Iterator[OwnerConsole]:
    with owner_console(tmp_path, password=True) as served:
        yield served


def _cookie(page: Page) -> str | None:
    values = [c["value"] for c in page.context.cookies() if c["name"] == COOKIE]
    return values[0] if values else None


def _sign_in(page: Page, origin: str, password: str) -> int:
    page.goto(origin + "/login")
    page.locator("#password").fill(password)
    with page.expect_response(origin + "/login") as answer:
        page.locator("form[action^='/login'] button[type=submit]").click()
    page.wait_for_load_state()
    return answer.value.status


def _signed_in(page: Page, origin: str) -> bool:
    page.goto(origin + "/")
    return page.url == origin + "/"


def _auto_post(action: str, fields: dict[str, str]) -> str:
    inputs = "".join(f'<input type="hidden" name="{n}" value="{v}">' for n, v in fields.items())
    return (
        '<!doctype html><html lang="en"><head><title>Prize</title></head><body>'
        f'<form id="f" method="post" action="{action}">{inputs}</form>'
        "<script>document.getElementById('f').submit()</script></body></html>"
    )


@pytest.mark.parametrize("method", ["password", "passkey"])
def test_a_cookie_planted_before_sign_in_is_not_the_session_after_it_and_is_worth_nothing(
    new_page: Callable[..., Page],
    tmp_path: Path,
    screenshots: Screenshots,
    method: str,
) -> None:
    with owner_console(tmp_path, password=False) as console:
        victim = new_page()
        key = VirtualAuthenticator(victim)
        console.create_first_passkey(victim)
        console.services.console_access().set_password(console.password)
        victim.context.clear_cookies()

        attacker = new_page()
        attacker.goto(console.named + "/login")
        planted = _cookie(attacker)
        assert planted is not None
        victim.context.add_cookies([{"name": COOKIE, "value": planted, "url": console.named}])
        victim.goto(console.named + "/login")
        assert _cookie(victim) == planted
        screenshots.take(victim, "the sign-in form under a planted cookie")
        if method == "password":
            victim.locator("#password").fill(console.password)
            victim.locator("form[action^='/login'] button[type=submit]").click()
        else:
            assert key.credentials()
            victim.locator("#passkey-button").click()
        victim.wait_for_url(console.named + "/")
        screenshots.take(victim, f"signed in by {method}")

        after = _cookie(victim)
        assert after is not None
        assert after != planted
        assert console.services.console_access().session(planted) is None
        assert not _signed_in(attacker, console.named)
        assert attacker.url == console.named + "/login"
        screenshots.take(attacker, "the planted cookie opens nothing")
        assert _signed_in(victim, console.named)


@pytest.mark.parametrize("attacker_host", ["localhost", "127.0.0.1"])
def test_a_page_of_another_origin_can_neither_read_the_console_nor_act_with_its_cookie(
    page: Page, console: OwnerConsole, screenshots: Screenshots, attacker_host: str
) -> None:
    origin = console.numbered
    assert _sign_in(page, origin, console.password) == 303
    held = _cookie(page)
    with serve({"/": Answer(BLANK)}) as other:
        page.goto(f"http://{attacker_host}:{other.port}/")
        read = page.evaluate(READ_AND_POST, [origin + "/", origin + "/logout"])
        screenshots.take(page, f"the attacker's page on {attacker_host}")
    attacker = f"http://{attacker_host}:{other.port}"
    assert read == ["blocked:TypeError", "blocked:TypeError"]
    same_site = attacker_host == "127.0.0.1"
    (shown,) = [s for s in console.answered("GET", "/") if s.origin == attacker]
    assert (shown.cookie, shown.status) == ((True, 200) if same_site else (False, 303))
    (posted,) = console.answered("POST", "/logout")
    assert (posted.origin, posted.cookie, posted.status) == (attacker, same_site, 403)
    assert _signed_in(page, origin)
    assert _cookie(page) == held


def test_a_copied_cookie_is_honoured_until_the_owner_signs_out_then_is_worth_nothing(
    new_page: Callable[..., Page], console: OwnerConsole, screenshots: Screenshots
) -> None:
    """Sessions are not bound to the client's address (the console is reached through a
    tunnel or a proxy on its own machine, where every visitor has the same one): signing out
    is what ends a copied cookie, for every holder at once."""
    owner = new_page()
    assert _sign_in(owner, console.numbered, console.password) == 303
    stolen = _cookie(owner)
    assert stolen is not None
    thief = new_page()
    thief.context.add_cookies([{"name": COOKIE, "value": stolen, "url": console.numbered}])
    assert _signed_in(thief, console.numbered)
    with owner.expect_navigation():
        owner.get_by_role("button", name="Sign out").click()
    assert not _signed_in(thief, console.numbered)
    screenshots.take(thief, "the copied cookie after sign-out")


def test_wrong_passwords_are_bounded_and_the_wait_is_a_readable_page(
    page: Page,
    new_page: Callable[..., Page],
    console: OwnerConsole,
    screenshots: Screenshots,
    axe: Axe,
) -> None:
    origin = console.numbered
    for _ in range(FREE_FAILURES_PER_CLIENT):
        assert _sign_in(page, origin, "not the owner password") == 403
    assert page.locator("#notice").inner_text() == "That password is not the owner password."

    page.goto(origin + "/login")
    page.locator("#password").fill("not the owner password either")
    with page.expect_response(origin + "/login") as answer:
        page.locator("form[action^='/login'] button[type=submit]").click()
    page.wait_for_load_state()
    assert answer.value.status == 429
    wait = int(answer.value.headers["retry-after"])
    assert 0 < wait <= 30
    notice = page.get_by_role("alert")
    assert notice.inner_text() == f"Too many wrong passwords. Try again in {wait} seconds."
    assert page.locator("#password").is_visible()
    screenshots.take(page, "told to wait")
    axe(page)

    assert _sign_in(page, origin, console.password) == 429
    assert not _signed_in(page, origin)

    phone = new_page(PHONE, "cs-CZ")
    assert _sign_in(phone, origin, console.password) == 429
    assert phone.get_by_role("alert").inner_text().startswith("Příliš mnoho chybných hesel.")
    screenshots.take(phone, "told to wait on a phone in Czech")
    axe(phone)
    widths = phone.evaluate(
        "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    assert widths[0] <= widths[1] == 360


@pytest.mark.parametrize("attacker_host", ["localhost", "127.0.0.1"])
def test_a_form_of_another_origin_cannot_remove_a_passkey_or_sign_in_with_one(
    new_page: Callable[..., Page],
    tmp_path: Path,
    screenshots: Screenshots,
    attacker_host: str,
) -> None:
    """The attacker's form is given the owner's real CSRF token: what refuses it is the
    console's origin check (and, from the other site, the cookie not sent)."""
    with owner_console(tmp_path, password=False) as console:
        page = new_page()
        VirtualAuthenticator(page)
        console.create_first_passkey(page)
        (kept,) = console.services.console_passkeys().passkeys()
        session = console.services.console_access().session(_cookie(page))
        assert session is not None
        csrf = session.csrf_secret
        remove = console.named + f"/passkeys/{kept.credential_id}/remove"
        sign_in = console.named + "/passkeys/sign-in"
        attack = {
            "/remove": Answer(_auto_post(remove, {"csrf": csrf})),
            "/sign-in": Answer(_auto_post(sign_in, {"csrf": csrf, "credential": "{}"})),
        }
        with serve(attack) as other:
            for path, target in (("/remove", remove), ("/sign-in", sign_in)):
                with page.expect_response(target) as refused:
                    page.goto(f"http://{attacker_host}:{other.port}{path}")
                page.wait_for_load_state()
                assert refused.value.request.method == "POST"
                assert refused.value.status == 403
                (seen,) = console.answered("POST", target.removeprefix(console.named))
                assert seen.cookie is (attacker_host == "localhost")
                console.recording.seen.clear()
                screenshots.take(page, f"refused {path} from {attacker_host}")
        assert console.services.console_passkeys().passkeys() == [kept]
        assert _signed_in(page, console.named)
