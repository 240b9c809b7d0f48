"""A person's grant of access, against the real authorization server on loopback: the
device flow (RFC 8628) and the loopback redirect with PKCE (RFC 8252, RFC 7636)."""

from __future__ import annotations

import base64
import hashlib
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator

import httpx2
import pytest

from mailfathom.adapters.oauth.endpoint import TokenEndpoint
from mailfathom.adapters.oauth.flows import DevicePrompt, OAuthClient, device_grant, loopback_grant
from mailfathom.domain.errors import GrantFailed
from mailfathom.domain.oauth import OAuthProvider
from mailfathom.entrypoints.cli.granting import GrantPlan, obtain_grant
from mailfathom.entrypoints.cli.init_oauth_answers import GrantFlow
from servers.oauth import OAuthServer

from .browser import Browser

SCOPES = ("mail.imap", "mail.smtp")


@pytest.fixture
def client(oauth_server: OAuthServer) -> OAuthClient:
    client_id = f"mailfathom-{uuid.uuid4().hex[:8]}"
    oauth_server.add_client(client_id, redirect_uris=["http://127.0.0.1"])
    return OAuthClient(client_id, SCOPES)


@pytest.fixture
def authorizing(oauth_server: OAuthServer) -> Iterator[OAuthServer]:
    """The server's authorization endpoint answering at once; back to declining after."""
    try:
        yield oauth_server
    finally:
        oauth_server.approve_authorizations_as(None)


def _approving(
    server: OAuthServer, subject: str, shown: list[DevicePrompt]
) -> Callable[[DevicePrompt], None]:
    def show(prompt: DevicePrompt) -> None:
        shown.append(prompt)
        server.approve_device(prompt.user_code, subject)

    return show


def _refreshes(server: OAuthServer, client: OAuthClient, refresh_token: str) -> bool:
    endpoint = TokenEndpoint()
    try:
        answer = endpoint.refresh(
            server.token_endpoint,
            client_id=client.client_id,
            client_secret=None,
            refresh_token=refresh_token,
        )
    finally:
        endpoint.close()
    return bool(answer.access_token)


def _grant_code(run: Callable[[], object]) -> int:
    with pytest.raises(GrantFailed) as failed:
        run()
    return failed.value.code


def test_the_device_flow_shows_the_code_and_yields_a_refresh_token(
    oauth_server: OAuthServer, client: OAuthClient
) -> None:
    shown: list[DevicePrompt] = []
    grant = device_grant(
        oauth_server.device_authorization_endpoint,
        oauth_server.token_endpoint,
        client,
        _approving(oauth_server, "someone", shown),
    )
    (prompt,) = shown
    assert prompt.verification_uri == f"{oauth_server.issuer}/device"
    assert prompt.user_code
    assert grant.access_token
    assert grant.refresh_token not in repr(grant)
    assert _refreshes(oauth_server, client, grant.refresh_token)


def test_the_device_flow_waits_five_seconds_more_after_slow_down(
    oauth_server: OAuthServer, client: OAuthClient
) -> None:
    # The first two waits are cut short, so the second poll comes too soon: the server
    # answers slow_down and every later wait must be five seconds longer.
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        if len(waits) > 2:
            time.sleep(seconds)

    approved = threading.Event()

    def show(prompt: DevicePrompt) -> None:
        def approve_later() -> None:
            while len(waits) < 3:
                time.sleep(0.05)
            oauth_server.approve_device(prompt.user_code, "someone")
            approved.set()

        threading.Thread(target=approve_later, daemon=True).start()

    grant = device_grant(
        oauth_server.device_authorization_endpoint,
        oauth_server.token_endpoint,
        client,
        show,
        sleep=sleep,
    )
    assert approved.is_set()
    assert grant.refresh_token
    assert waits[:3] == [1.0, 1.0, 6.0]


def test_a_declined_device_code_is_its_own_code(
    oauth_server: OAuthServer, client: OAuthClient
) -> None:
    def show(prompt: DevicePrompt) -> None:
        oauth_server.deny_device(prompt.user_code)

    run = lambda: device_grant(  # noqa: E731
        oauth_server.device_authorization_endpoint, oauth_server.token_endpoint, client, show
    )
    assert _grant_code(run) == 11016


def test_a_device_code_nobody_approves_expires() -> None:
    with OAuthServer() as server:
        server.add_client("mailfathom")
        server.set_device_code_lifetime(2)
        run = lambda: device_grant(  # noqa: E731
            server.device_authorization_endpoint,
            server.token_endpoint,
            OAuthClient("mailfathom", SCOPES),
            lambda prompt: None,
        )
        assert _grant_code(run) == 11017
        assert "device" not in server.counts()


def test_an_unknown_client_is_refused_by_name(oauth_server: OAuthServer) -> None:
    with pytest.raises(GrantFailed) as failed:
        device_grant(
            oauth_server.device_authorization_endpoint,
            oauth_server.token_endpoint,
            OAuthClient("nobody-registered-this", SCOPES),
            lambda prompt: None,
        )
    assert failed.value.code == 72008
    assert "invalid_client" in str(failed.value)


def _challenge(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode()).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def test_the_loopback_flow_sends_the_browser_and_redeems_the_code_with_pkce(
    authorizing: OAuthServer, client: OAuthClient
) -> None:
    authorizing.approve_authorizations_as("someone")
    before = authorizing.counts().get("code", 0)
    browser = Browser()
    grant = loopback_grant(
        authorizing.authorization_endpoint, authorizing.token_endpoint, client, browser
    )
    assert browser.wait() == [200]
    query = browser.query()
    assert query["code_challenge_method"] == ["S256"]
    assert len(query["code_challenge"][0]) == 43
    assert query["redirect_uri"][0].startswith("http://127.0.0.1:")
    assert query["scope"] == [" ".join(SCOPES)]
    assert len(query["state"][0]) >= 32
    assert authorizing.counts()["code"] == before + 1
    assert _refreshes(authorizing, client, grant.refresh_token)


def test_a_declined_authorization_is_its_own_code(
    authorizing: OAuthServer, client: OAuthClient
) -> None:
    authorizing.approve_authorizations_as(None)
    browser = Browser()
    run = lambda: loopback_grant(  # noqa: E731
        authorizing.authorization_endpoint, authorizing.token_endpoint, client, browser
    )
    assert _grant_code(run) == 11016


def test_an_answer_with_another_state_is_refused_and_the_real_one_awaited(
    authorizing: OAuthServer, client: OAuthClient
) -> None:
    # Someone on the machine answers the listener first, with a code of their own: it is
    # refused for its state, and the grant goes on with the answer the browser brings.
    authorizing.approve_authorizations_as("someone")
    before = authorizing.counts().get("code", 0)
    browser = Browser()
    forged: list[int] = []

    def forge_then_open(url: str) -> None:
        redirect = httpx2.QueryParams(url.split("?", 1)[1])["redirect_uri"]
        for query in ("code=theirs&state=not-the-one", "error=access_denied&state=forged"):
            forged.append(httpx2.get(f"{redirect}/?{query}", timeout=30).status_code)
        browser(url)

    def show(url: str) -> None:
        threading.Thread(target=forge_then_open, args=(url,), daemon=True).start()

    grant = loopback_grant(
        authorizing.authorization_endpoint,
        authorizing.token_endpoint,
        client,
        show,
        wait_seconds=60,
    )
    assert forged == [400, 400]
    assert browser.wait() == [200]
    assert authorizing.counts()["code"] == before + 1
    assert _refreshes(authorizing, client, grant.refresh_token)


def test_a_localhost_redirect_is_heard_on_both_loopback_addresses(
    authorizing: OAuthServer,
) -> None:
    # A browser may reach `localhost` over IPv6 first: nobody else on the machine may take
    # [::1] at the listener's port, and an answer arriving there is taken.
    client = OAuthClient(f"mailfathom-{uuid.uuid4().hex[:8]}", SCOPES)
    authorizing.add_client(client.client_id, redirect_uris=["http://localhost"])
    authorizing.approve_authorizations_as("someone")
    taken: list[bool] = []

    def show(url: str) -> None:
        threading.Thread(target=answer_over_ipv6, args=(url,), daemon=True).start()

    def answer_over_ipv6(url: str) -> None:
        query = httpx2.QueryParams(url.split("?", 1)[1])
        port = int(query["redirect_uri"].rsplit(":", 1)[1])
        other = socket.socket(socket.AF_INET6)
        try:
            other.bind(("::1", port))
        except OSError:
            taken.append(True)
        else:
            taken.append(False)
        finally:
            other.close()
        answer = httpx2.get(authorizing.authorization_endpoint, params=query, timeout=30)
        back = answer.headers["location"].replace("//localhost:", "//[::1]:")
        httpx2.get(back, timeout=30)

    grant = loopback_grant(
        authorizing.authorization_endpoint,
        authorizing.token_endpoint,
        client,
        show,
        redirect_host="localhost",
        wait_seconds=60,
    )
    assert taken == [True]
    assert _refreshes(authorizing, client, grant.refresh_token)


def test_no_answer_in_time_is_an_expired_grant(
    oauth_server: OAuthServer, client: OAuthClient
) -> None:
    run = lambda: loopback_grant(  # noqa: E731
        oauth_server.authorization_endpoint,
        oauth_server.token_endpoint,
        client,
        lambda url: None,
        wait_seconds=0.5,
    )
    assert _grant_code(run) == 11017


@pytest.mark.parametrize("provider", [OAuthProvider.GMAIL, OAuthProvider.GENERIC])
def test_a_named_providers_sign_in_page_is_told_the_accounts_user(
    authorizing: OAuthServer, client: OAuthClient, provider: OAuthProvider
) -> None:
    # Google and Microsoft offer the user named in `login_hint` first, so the person does
    # not grant access as another of their accounts; a generic server is not told.
    authorizing.approve_authorizations_as("someone")
    browser = Browser()
    plan = GrantPlan(
        provider,
        client,
        authorizing.token_endpoint,
        None,
        authorizing.authorization_endpoint,
        login_hint="someone@example.test",
    )

    def say(line: str) -> None:
        if line.startswith(authorizing.authorization_endpoint):
            browser(line)

    grant = obtain_grant(plan, GrantFlow.LOOPBACK, say, interactive=False)
    assert browser.wait() == [200]
    hinted = browser.query().get("login_hint")
    assert hinted == (["someone@example.test"] if provider is OAuthProvider.GMAIL else None)
    assert _refreshes(authorizing, client, grant.refresh_token)


@pytest.mark.parametrize("which", ["device", "token"])
def test_a_device_grant_never_asks_in_the_clear_whatever_the_environment(
    oauth_server: OAuthServer,
    client: OAuthClient,
    which: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AUTHLIB_INSECURE_TRANSPORT", "1")
    before = oauth_server.counts()
    clear = "http://mail.example.org/x"
    device = clear if which == "device" else oauth_server.device_authorization_endpoint
    token = clear if which == "token" else oauth_server.token_endpoint
    assert _grant_code(lambda: device_grant(device, token, client, lambda p: None)) == 72006
    assert oauth_server.counts() == before


@pytest.mark.parametrize("which", ["authorization", "token"])
def test_a_loopback_grant_never_asks_in_the_clear_whatever_the_environment(
    oauth_server: OAuthServer,
    client: OAuthClient,
    which: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AUTHLIB_INSECURE_TRANSPORT", "1")
    clear = "http://mail.example.org/x"
    shown: list[str] = []
    authorize = clear if which == "authorization" else oauth_server.authorization_endpoint
    token = clear if which == "token" else oauth_server.token_endpoint
    run = lambda: loopback_grant(authorize, token, client, shown.append, wait_seconds=0.5)  # noqa: E731
    assert _grant_code(run) == 72006
    assert shown == []
