"""Passkeys in Chromium, with the browser's own virtual authenticator (CTAP2, internal
transport, resident keys, user verification): the owner's first passkey, made on the first
sign-in from loopback with the code `mailfathom console first-passkey` prints, signs in, and
after signing out signs in again; adding another after a while asks to sign in again; the
same key used for another name is refused; an answer the browser gave once is refused when
sent again. The passkey pages are checked by axe at desktop and phone width, in English,
Czech and Slovak."""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import pytest
from playwright.sync_api import Page, Response

from browser.axe_core import Violation
from browser.chromium import DESKTOP, PHONE, Viewport
from browser.fixtures import Screenshots
from browser.owner_console import OwnerConsole, VirtualAuthenticator, owner_console
from browser.served import Answer, serve
from console.conftest import Clock
from mailfathom.domain.console import FRESH_SIGN_IN_SECONDS

Axe = Callable[[Page], list[Violation]]

# What static/passkey.js sends, made here for an answer got on a page of another site.
ANSWER = """async ([options, rpId]) => {
  const bytes = (t) => Uint8Array.from(atob(t.replace(/-/g, '+').replace(/_/g, '/')
    + '==='.slice((t.length + 3) % 4)), (c) => c.charCodeAt(0));
  const text = (b) => btoa(String.fromCharCode(...new Uint8Array(b)))
    .replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
  const o = JSON.parse(options);
  const c = await navigator.credentials.get({publicKey: {
    challenge: bytes(o.challenge), rpId: rpId, userVerification: 'preferred'}});
  const r = c.response;
  return JSON.stringify({id: c.id, rawId: text(c.rawId), type: c.type,
    clientExtensionResults: {}, response: {clientDataJSON: text(r.clientDataJSON),
    authenticatorData: text(r.authenticatorData), signature: text(r.signature),
    userHandle: text(r.userHandle)}});
}"""
OPTIONS = """async () => {
  const form = document.getElementById('passkey-form');
  const given = await fetch('/passkeys/options/sign-in', {method: 'POST',
    body: new URLSearchParams({csrf: form.elements.csrf.value})});
  return await given.text();
}"""
SUBMIT = """(answer) => {
  const form = document.getElementById('passkey-form');
  form.elements.credential.value = answer;
  form.submit();
}"""


@pytest.fixture
def console(tmp_path: Path) -> Iterator[OwnerConsole]:
    with owner_console(tmp_path, password=False) as served:
        yield served


def _raw(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _signed_in(page: Page, console: OwnerConsole) -> bool:
    return page.url == console.named + "/" and page.locator("#password").count() == 0


def _enrol(page: Page, console: OwnerConsole) -> VirtualAuthenticator:
    key = VirtualAuthenticator(page)
    console.create_first_passkey(page)
    return key


def _sign_out(page: Page, console: OwnerConsole) -> None:
    with page.expect_navigation():
        page.get_by_role("button", name="Sign out").click()
    assert page.url == console.named + "/login"


def _send(page: Page, console: OwnerConsole, answer: str) -> Response:
    with page.expect_response(console.named + "/passkeys/sign-in") as sent:
        page.evaluate(SUBMIT, answer)
    page.wait_for_load_state()
    return sent.value


def test_enrol_on_the_first_loopback_sign_in_sign_out_and_sign_in_with_the_passkey(
    page: Page, console: OwnerConsole, screenshots: Screenshots, axe: Axe
) -> None:
    key = VirtualAuthenticator(page)
    page.goto(console.named + "/login")
    assert page.locator("#passkey-form").count() == 0
    assert "first-passkey" in page.locator("#passkey-first-how").inner_text()
    screenshots.take(page, "nobody can sign in: the page says how to begin")
    axe(page)
    code = console.first_passkey_code()
    page.goto(console.named + "/login")
    button = page.locator("#passkey-button")
    assert button.inner_text() == "Create the owner's passkey"
    screenshots.take(page, "first sign-in offers the owner's passkey")
    axe(page)
    button.click()
    assert page.url == console.named + "/login"
    page.get_by_label("One-time code").fill(code)
    button.click()
    page.wait_for_url(console.named + "/")
    assert _signed_in(page, console)
    screenshots.take(page, "signed in by creating the passkey")

    (made,) = key.credentials()
    assert made["rpId"] == "localhost"
    assert made["isResidentCredential"] is True
    (kept,) = console.services.console_passkeys().passkeys()
    assert _raw(kept.credential_id) == base64.b64decode(made["credentialId"])

    _sign_out(page, console)
    assert page.locator("#passkey-button").inner_text() == "Sign in with a passkey"
    assert page.locator("#notice").count() == 0
    screenshots.take(page, "sign-in offers the passkey")
    axe(page)
    page.locator("#passkey-button").click()
    page.wait_for_url(console.named + "/")
    assert _signed_in(page, console)
    screenshots.take(page, "signed in with the passkey")
    (used,) = console.services.console_passkeys().passkeys()
    (counted,) = key.credentials()
    assert used.sign_count == counted["signCount"] > 0
    assert used.last_used_at is not None


def test_the_same_key_used_for_another_name_is_refused(
    page: Page, console: OwnerConsole, screenshots: Screenshots
) -> None:
    key = _enrol(page, console)
    (enrolled,) = console.services.console_passkeys().passkeys()
    _sign_out(page, console)
    options = page.evaluate(OPTIONS)
    (ours,) = key.credentials()
    key.session.send(
        "WebAuthn.removeCredential",
        {"authenticatorId": key.authenticator_id, "credentialId": ours["credentialId"]},
    )
    fields = ("credentialId", "isResidentCredential", "privateKey", "userHandle", "signCount")
    key.add({**{f: ours[f] for f in fields}, "rpId": "other.localhost"})
    other_page = "<!doctype html><html lang='en'><title>Other</title><p>Another site</p></html>"
    with serve({"/": Answer(other_page)}) as other:
        page.goto(f"http://other.localhost:{other.port}/")
        answer = page.evaluate(ANSWER, [options, "other.localhost"])
    page.goto(console.named + "/login")
    refused = _send(page, console, answer)
    assert refused.status == 403
    assert page.locator("#notice").inner_text() == "That passkey was not accepted."
    screenshots.take(page, "a passkey of another name refused")
    page.goto(console.named + "/")
    assert page.url == console.named + "/login"
    assert console.services.console_passkeys().passkeys() == [enrolled]


def test_an_answer_sent_again_is_refused(
    page: Page, console: OwnerConsole, screenshots: Screenshots
) -> None:
    _enrol(page, console)
    _sign_out(page, console)
    with page.expect_request(
        lambda r: r.url == console.named + "/passkeys/sign-in" and r.method == "POST"
    ) as sent:
        page.locator("#passkey-button").click()
    page.wait_for_url(console.named + "/")
    (captured,) = parse_qs(sent.value.post_data or "")["credential"]
    _sign_out(page, console)

    refused = _send(page, console, captured)
    assert refused.status == 403
    assert page.locator("#notice").inner_text() == (
        "The passkey request expired or was used already. Try again."
    )
    screenshots.take(page, "a replayed answer refused")
    page.evaluate(OPTIONS)
    refused = _send(page, console, captured)
    assert refused.status == 403
    assert page.locator("#notice").inner_text() == "That passkey was not accepted."
    page.goto(console.named + "/")
    assert page.url == console.named + "/login"


@pytest.mark.parametrize(
    ("viewport", "locale", "heading"),
    [
        (DESKTOP, "en-US", "Passkeys"),
        (PHONE, "en-US", "Passkeys"),
        (DESKTOP, "cs-CZ", "Přístupové klíče"),
        (PHONE, "sk-SK", "Prístupové kľúče"),
    ],
)
def test_the_passkey_pages_pass_axe_and_fit_a_phone(
    new_page: Callable[..., Page],
    console: OwnerConsole,
    screenshots: Screenshots,
    axe: Axe,
    viewport: Viewport,
    locale: str,
    heading: str,
) -> None:
    page = new_page(viewport, locale)
    first = _enrol(page, console)
    page.goto(console.named + "/passkeys")
    assert page.locator("main h1").inner_text() == heading
    assert page.locator("#passkey-form").is_visible()
    assert page.locator("tbody tr").count() == 1
    screenshots.take(page, f"passkeys {locale} {viewport.width}")
    axe(page)
    assert _fits(page, viewport)

    page.locator("#passkey-label").fill("Second ✓ key")
    page.locator("#passkey-button").click()
    status = page.locator("#passkey-status")
    status.filter(
        has_text=page.locator("#passkey-form").get_attribute("data-failed") or "-"
    ).wait_for()
    assert page.locator("tbody tr").count() == 1
    screenshots.take(page, f"the same device refused a second passkey {locale} {viewport.width}")
    first.session.send(
        "WebAuthn.removeVirtualAuthenticator", {"authenticatorId": first.authenticator_id}
    )
    VirtualAuthenticator(page)
    page.locator("#passkey-button").click()
    page.wait_for_url(console.named + "/passkeys?done=added")
    assert page.locator("tbody tr").count() == 2
    screenshots.take(page, f"passkey added {locale} {viewport.width}")
    axe(page)
    with page.expect_navigation():
        page.locator("#passkey-1 button").click()
    assert page.locator("tbody tr").count() == 1
    assert page.locator("#notice").is_visible()
    _sign_out_anywhere(page)
    page.goto(console.named + "/login")
    screenshots.take(page, f"passkey sign-in {locale} {viewport.width}")
    axe(page)
    assert _fits(page, viewport)


def test_adding_a_passkey_after_a_while_asks_to_sign_in_again(
    page: Page, tmp_path: Path, screenshots: Screenshots, axe: Axe
) -> None:
    clock = Clock(datetime.now(UTC))
    with owner_console(tmp_path, password=False, clock=clock) as console:
        _enrol(page, console)
        clock.advance(FRESH_SIGN_IN_SECONDS + 1)
        page.goto(console.named + "/passkeys")
        assert page.locator("#passkey-form").count() == 0
        again = page.locator("#passkey-again a")
        screenshots.take(page, "adding a passkey asks for a new sign-in")
        axe(page)
        with page.expect_navigation():
            again.click()
        assert page.url == console.named + "/login?again=passkeys"
        assert page.locator("#notice").is_visible()
        screenshots.take(page, "the sign-in form asks to sign in again")
        axe(page)
        page.locator("#passkey-button").click()
        page.wait_for_url(console.named + "/passkeys")
        assert page.locator("#passkey-form").is_visible()
        assert page.locator("#passkey-again").count() == 0


def _sign_out_anywhere(page: Page) -> None:
    with page.expect_navigation():
        page.locator("header form button").click()


def _fits(page: Page, viewport: Viewport) -> bool:
    widths: list[Any] = page.evaluate(
        "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    return bool(widths[0] <= widths[1] == viewport.width)
