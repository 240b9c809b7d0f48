"""The console of a real `mailfathom serve` reached through a reverse proxy that terminates
TLS, as `[Console] PublicOrigin` configures it, in Chromium: the owner signs in at the public
HTTPS origin, a decision (deleting a kept draft) goes through, and the cookie is `__Host-`
and `Secure`, whether the proxy passes the browser's `Host` or the listener's own. The
proxy's forwarded headers are believed no more than before, and a request made straight to
the loopback listener from any other origin is still refused."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import httpx2
import lxml.html
import pytest
from playwright.sync_api import Browser, Page

import log_audit
from browser.fixtures import Screenshots
from console.served_keys import serving
from console.test_drafts_page import AGENT, drafts_config
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.app.confirmation.confirmed_sending import NobodyToAsk, Status
from mailfathom.app.drafting.composition import DraftRequest
from mailfathom.bootstrap import Services
from mcp_tests.deployment import _free_port
from servers.tls_proxy import TlsProxy, tls_proxy

SECURE_COOKIE = "__Host-mf_console"


@dataclass(frozen=True)
class Published:
    proxy: TlsProxy
    listener: str
    password: str
    draft_id: str


def _keep_draft(services: Services) -> str:
    request = DraftRequest(
        account="home", subject="Behind the proxy", to=["friend@example.net"], plain_text_body="Hi"
    )
    drafting = services.drafting()
    draft_id = str(drafting.save.save(AGENT, request).draft_id)
    assert drafting.send.settle(AGENT, draft_id, NobodyToAsk(), None).status is Status.DRAFT
    return draft_id


def _served(root: Path, host: Literal["public", "upstream"]) -> Iterator[Published]:
    password = "owner-" + uuid.uuid4().hex
    log_audit.register(password)
    mcp_port, console_port, public_port = _free_port(), _free_port(), _free_port()
    config = drafts_config(root)
    text = config.read_text("utf-8").replace(
        "[Console]\nEnabled = true\n",
        f'[Console]\nEnabled = true\nListen = "127.0.0.1:{console_port}"\n'
        f'PublicOrigin = "https://localhost:{public_port}"\n',
    )
    text += f'\n[McpEndpoint]\nEnabled = true\nListen = "127.0.0.1:{mcp_port}"\n'
    text += '\n[[McpEndpoint.Callers]]\nName = "local"\nCredential = "none"\n'
    config.write_text(text, "utf-8")
    with Services.open(load_config(config)) as services:
        services.console_access().set_password(password)
        draft_id = _keep_draft(services)
    with (
        serving(root, config, mcp_port, console_port),
        tls_proxy(console_port, host, port=public_port) as proxy,
    ):
        yield Published(proxy, f"http://127.0.0.1:{console_port}", password, draft_id)


@pytest.fixture(params=["public", "upstream"])
def published(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Published]:
    yield from _served(tmp_path, request.param)


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(ignore_https_errors=True, viewport={"width": 1280, "height": 800})
    try:
        yield context.new_page()
    finally:
        context.close()


def test_the_owner_signs_in_and_decides_through_an_https_proxy(
    published: Published, page: Page, screenshots: Screenshots
) -> None:
    origin = published.proxy.origin
    page.goto(origin + "/login")
    screenshots.take(page, "sign-in-at-the-public-origin")
    page.locator("#password").fill(published.password)
    with page.expect_response(origin + "/login") as signed:
        page.locator("#password").press("Enter")
    assert signed.value.status == 303
    page.wait_for_url(origin + "/")
    (cookie,) = [c for c in page.context.cookies() if "mf_console" in c["name"]]
    assert cookie["name"] == SECURE_COOKIE
    assert cookie["secure"] is True
    assert cookie["httpOnly"] is True
    screenshots.take(page, "overview")

    page.goto(origin + "/drafts")
    section = page.locator(f"#draft-{published.draft_id}")
    with page.expect_response(f"{origin}/drafts/{published.draft_id}/delete") as deleted:
        section.locator("button.delete").click()
    assert deleted.value.status in (200, 303)
    page.wait_for_load_state()
    assert page.locator("#none-waiting").is_visible()
    screenshots.take(page, "draft-deleted")

    page.goto(origin + "/passkeys")
    assert page.locator("#passkey-form").count() == 1
    screenshots.take(page, "passkeys-offered-at-the-public-origin")
    assert set(published.proxy.seen_hosts) == {f"localhost:{published.proxy.port}"}


def test_the_loopback_listener_still_refuses_other_origins(published: Published) -> None:
    listener = published.listener
    with httpx2.Client(base_url=listener, timeout=30) as client:
        form = client.get("/login")
        assert form.status_code == 200
        assert form.headers["set-cookie"].startswith(SECURE_COOKIE + "=")
        assert "secure" in form.headers["set-cookie"].lower()
        (csrf,) = lxml.html.fromstring(form.text).xpath('//input[@name="csrf"]/@value')
        # A Secure cookie is not sent over plain HTTP by a client's jar: this one sends it.
        visit = {"Cookie": form.headers["set-cookie"].split(";", 1)[0]}
        for foreign in ("https://evil.example", listener, "http://localhost:1", "null"):
            refused = client.post(
                "/login",
                data={"csrf": csrf, "password": published.password},
                headers={**visit, "Origin": foreign},
            )
            assert refused.status_code == 403, foreign
            assert "set-cookie" not in refused.headers
        renamed = client.get("/login", headers={"Host": "evil.example"})
        assert renamed.status_code == 400
        through = client.post(
            "/login",
            data={"csrf": csrf, "password": published.password},
            headers={**visit, "Origin": published.proxy.origin},
        )
        assert through.status_code == 303
        assert through.headers["set-cookie"].startswith(SECURE_COOKIE + "=")
