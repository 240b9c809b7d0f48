"""`mailfathom serve` as an OAuth 2.1 resource server of a real authorization server on
loopback: the official client's OAuth support from the first 401 to a refreshed token, each
refusal over HTTP with nothing served, and API keys admitted beside tokens."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.auth import OAuthClientProvider

from mailfathom.domain.access import Permission
from mcp_tests.client import UNKNOWN_TOOL, call, code, refusal, structured, tool_names
from mcp_tests.deployment import KEYS, Deployment
from mcp_tests.hardened import Served, close_session, initialize, list_tools, open_session
from mcp_tests.oauth_deployment import SUBJECTS, minted, serve_oauth, with_oauth_client
from mcp_tests.test_read_tools_http import READ_TOOLS
from servers.oauth import OAuthServer

METADATA_PATH = "/.well-known/oauth-protected-resource/mcp"
READ = "mailfathom.mail.read"
SEND = "mailfathom.mail.send"
PREFIX = "api://mailfathom/"
# Every permission some tool (or a tool's wider form) of the deployment needs: all of them but
# asking, which needs AI providers the deployment does not configure.
SCOPES = [p.value for p in Permission if p is not Permission.ASK]


@pytest.fixture(scope="module")
def served(mcp_deployment: Deployment, oauth_server: OAuthServer) -> Iterator[Served]:
    with serve_oauth(mcp_deployment, oauth_server.issuer) as serving:
        yield serving


@pytest.fixture(scope="module")
def requiring(mcp_deployment: Deployment, oauth_server: OAuthServer) -> Iterator[Served]:
    """The same deployment advertising qualified scopes, and requiring reading of every token."""
    table = f'ScopePrefix = "{PREFIX}"\nRequiredScopes = ["{READ}"]\n'
    with serve_oauth(mcp_deployment, oauth_server.issuer, table) as serving:
        yield serving


@pytest.fixture
def person_signs_in(oauth_server: OAuthServer) -> Iterator[OAuthServer]:
    """The authorization server approves `person` at once and issues short-lived tokens,
    until the test ends."""
    oauth_server.approve_authorizations_as(SUBJECTS["person"])
    oauth_server.set_access_token_lifetime(3)
    try:
        yield oauth_server
    finally:
        oauth_server.approve_authorizations_as(None)
        oauth_server.set_access_token_lifetime(3600)


def _origin(url: str) -> str:
    return url.removesuffix("/mcp")


def _challenge(answer: httpx2.Response) -> dict[str, str]:
    header = answer.headers["www-authenticate"]
    assert header.startswith("Bearer ")
    return dict(re.findall(r'(\w+)="([^"]*)"', header))


def _wait_until_expired(provider: OAuthClientProvider) -> None:
    deadline = time.monotonic() + 30
    while provider.context.is_token_valid():
        assert time.monotonic() < deadline, "the access token never expired"
        time.sleep(0.1)


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_the_official_client_signs_in_calls_tools_and_refreshes(
    served: Served, person_signs_in: OAuthServer, mode: str
) -> None:
    before = person_signs_in.counts()

    async def work(client: Client, provider: OAuthClientProvider) -> tuple[list[str], Any, Any]:
        listed = [t.name for t in (await client.list_tools()).tools]
        first = await client.call_tool("list_accounts", {})
        # The token lapses; the next call refreshes it and is served as before.
        _wait_until_expired(provider)
        second = await client.call_tool("list_emails", {"pageSize": 2})
        return listed, first, second

    listed, first, second = with_oauth_client(served.url, work, mode=mode)
    after = person_signs_in.counts()
    assert sorted(listed) == sorted(tool_names(served.url, KEYS["full"]))
    assert structured(first)["accounts"][0]["accountId"] == "work"
    assert len(structured(second)["emails"]) == 2
    # Registered dynamically, authorized once with a code, refreshed after the expiry (and
    # perhaps again before the session is closed, should the new token lapse by then).
    for grant in ("registration", "code"):
        assert after.get(grant, 0) == before.get(grant, 0) + 1, grant
    assert after.get("refresh", 0) > before.get("refresh", 0)


def test_the_metadata_names_the_resource_its_authorization_server_and_scopes(
    served: Served, oauth_server: OAuthServer
) -> None:
    document = httpx2.get(_origin(served.url) + METADATA_PATH, timeout=30).json()
    assert document["resource"] == served.url
    assert document["authorization_servers"] == [oauth_server.issuer]
    assert document["bearer_methods_supported"] == ["header"]
    assert document["scopes_supported"] == SCOPES


def test_the_metadata_names_scopes_as_the_prefix_qualifies_them(requiring: Served) -> None:
    document = httpx2.get(_origin(requiring.url) + METADATA_PATH, timeout=30).json()
    assert document["scopes_supported"] == [PREFIX + scope for scope in SCOPES]


@pytest.mark.parametrize("authorization", [None, "Basic bWFpbDpmYXRob20=", "Bearer"])
def test_a_request_without_credentials_is_pointed_at_the_metadata_without_an_error(
    served: Served, authorization: str | None
) -> None:
    # RFC 6750 section 3.1: a request lacking authentication (none, or in a scheme this
    # endpoint does not take) is told where to get some, not that a token failed, which
    # some clients take as the cue to drop the token they hold.
    headers = {"Accept": "application/json"}
    if authorization is not None:
        headers["Authorization"] = authorization
    with httpx2.Client(timeout=30) as http:
        answer = http.post(served.url, json={}, headers=headers)
    assert answer.status_code == 401
    metadata = _origin(served.url) + METADATA_PATH
    assert answer.headers["www-authenticate"] == f'Bearer resource_metadata="{metadata}"'
    assert "error" not in answer.json()


def _refused(served: Served, token: str) -> httpx2.Response:
    with httpx2.Client(timeout=30) as http:
        answer = initialize(http, served.url, token)
    # Nothing served: no session, and no protocol message.
    assert "mcp-session-id" not in answer.headers
    assert "jsonrpc" not in answer.text
    return answer


@pytest.mark.parametrize(
    ("what", "options"),
    [
        ("another audience", {"audience": "http://127.0.0.1:1/mcp"}),
        ("expired", {"expires_in": -600}),
        ("signed by an unknown key", {"key": "unknown"}),
    ],
)
def test_a_token_that_does_not_hold_is_answered_401(
    served: Served, oauth_server: OAuthServer, what: str, options: dict[str, Any]
) -> None:
    minting: dict[str, Any] = {"audience": served.url, **options}
    token = minted(oauth_server, "person", minting.pop("audience"), READ, **minting)
    answer = _refused(served, token)
    assert answer.status_code == 401, what
    challenge = _challenge(answer)
    assert challenge["error"] == "invalid_token"
    assert challenge["resource_metadata"] == _origin(served.url) + METADATA_PATH


def test_text_that_is_no_token_and_no_key_is_answered_401(served: Served) -> None:
    answer = _refused(served, "neither-a-key-nor-a-token")
    assert answer.status_code == 401
    assert _challenge(answer)["error"] == "invalid_token"


def test_a_token_whose_scopes_carry_no_permission_is_served_an_empty_listing(
    served: Served, oauth_server: OAuthServer
) -> None:
    url = served.url
    # An entry nobody narrowed, and a client that received no permission scope.
    none = minted(oauth_server, "person", url, "openid", "profile")
    assert tool_names(url, none) == []
    assert refusal(url, none, "list_accounts") == UNKNOWN_TOOL
    # An entry granting reading, and a token carrying only what it does not grant.
    outside = minted(oauth_server, "reading-person", url, SEND)
    assert tool_names(url, outside) == []
    assert refusal(url, outside, "list_emails") == UNKNOWN_TOOL


def test_a_token_lacking_a_required_scope_is_answered_403_naming_the_required_ones(
    requiring: Served, oauth_server: OAuthServer
) -> None:
    url = requiring.url
    for who, scopes in [
        ("person", ("openid", "profile")),
        ("person", (SEND,)),
        # An entry serving its grant whatever the scopes is held to the required ones too.
        ("granted-person", ("openid",)),
    ]:
        answer = _refused(requiring, minted(oauth_server, who, url, *scopes))
        assert answer.status_code == 403, (who, scopes)
        challenge = _challenge(answer)
        assert challenge["error"] == "insufficient_scope"
        assert challenge["scope"] == PREFIX + READ
        assert challenge["resource_metadata"] == _origin(url) + METADATA_PATH
        assert answer.json()["error"] == "insufficient_scope"
    # A subject no entry names is told so, whatever its scopes.
    answer = _refused(requiring, minted(oauth_server, "stranger", url, "openid"))
    assert answer.status_code == 403
    assert "www-authenticate" not in answer.headers
    # The required scope is read with or without the prefix.
    for scope in (PREFIX + READ, READ):
        assert set(tool_names(url, minted(oauth_server, "person", url, scope))) == set(READ_TOOLS)
    logged = requiring.log.read_text("utf-8", errors="replace")
    assert '"a required scope is missing"' in logged
    assert "eyJ" not in logged


def test_a_subject_no_entry_names_is_answered_403_without_a_challenge(
    served: Served, oauth_server: OAuthServer
) -> None:
    answer = _refused(served, minted(oauth_server, "stranger", served.url, READ, SEND))
    assert answer.status_code == 403
    assert "www-authenticate" not in answer.headers
    assert answer.json()["error"] == "access_denied"


def test_tokens_signed_after_a_key_rotation_are_accepted(
    served: Served, oauth_server: OAuthServer
) -> None:
    before = minted(oauth_server, "person", served.url, READ)
    assert set(tool_names(served.url, before)) == set(READ_TOOLS)
    oauth_server.rotate_signing_key()
    after = minted(oauth_server, "person", served.url, READ)
    # Keys are fetched again for an unknown key id at most every few seconds: another test
    # may just have made this endpoint fetch them.
    deadline = time.monotonic() + 30
    while True:
        with httpx2.Client(timeout=30) as http:
            answer = initialize(http, served.url, after)
        if answer.status_code == 200:
            break
        assert answer.status_code == 401
        assert time.monotonic() < deadline, "the rotated key was never accepted"
        time.sleep(0.2)
    assert set(tool_names(served.url, after)) == set(READ_TOOLS)
    assert set(tool_names(served.url, before)) == set(READ_TOOLS)


def test_a_token_is_served_exactly_what_its_entry_and_scopes_grant(
    served: Served, oauth_server: OAuthServer
) -> None:
    url = served.url
    reading = tool_names(url, KEYS["reader"])
    assert set(reading) == set(READ_TOOLS)
    # Scopes narrow an entry granting everything.
    person = minted(oauth_server, "person", url, READ)
    assert tool_names(url, person) == reading
    assert refusal(url, person, "send_email", {"account": "work"}) == UNKNOWN_TOOL
    # An entry narrows scopes that ask for more.
    both = minted(oauth_server, "reading-person", url, READ, SEND)
    assert tool_names(url, both) == reading
    # An entry may serve its own grant whatever the scopes say.
    granted = minted(oauth_server, "granted-person", url, "openid")
    assert tool_names(url, granted) == reading
    assert code(call(url, granted, "list_accounts")) is None


def test_api_keys_are_admitted_beside_tokens(served: Served) -> None:
    assert set(tool_names(served.url, KEYS["reader"])) == set(READ_TOOLS)
    assert "send_email" in tool_names(served.url, KEYS["full"])


def test_a_session_opened_with_a_token_belongs_to_its_person_and_client(
    served: Served, oauth_server: OAuthServer
) -> None:
    url = served.url
    token = minted(oauth_server, "person", url, READ)
    with httpx2.Client(timeout=30) as http:
        session = open_session(http, url, token)
        try:
            same = minted(oauth_server, "person", url, READ)
            assert list_tools(http, url, same, session).status_code == 200
            other = minted(oauth_server, "reading-person", url, READ)
            for foreign in (KEYS["full"], other):
                assert list_tools(http, url, foreign, session).status_code == 404
            another_client = minted(oauth_server, "person", url, READ, client_id="elsewhere")
            assert list_tools(http, url, another_client, session).status_code == 404
        finally:
            close_session(http, url, token, session)


def test_no_token_subject_or_claim_reaches_the_log(
    served: Served, oauth_server: OAuthServer
) -> None:
    url = served.url
    accepted = minted(oauth_server, "person", url, READ)
    assert set(tool_names(url, accepted)) == set(READ_TOOLS)
    for refused in (
        minted(oauth_server, "person", url, READ, expires_in=-600),
        minted(oauth_server, "person", "http://127.0.0.1:1/mcp", READ),
        minted(oauth_server, "stranger", url, READ),
    ):
        assert _refused(served, refused).status_code in (401, 403)
    logged = served.log.read_text("utf-8", errors="replace")
    # The refusals are logged, by reason alone.
    assert '"oauth.token_refused"' in logged
    assert "eyJ" not in logged  # how every JWT's header begins
    for value in (*SUBJECTS.values(), oauth_server.issuer, "client_id", "minted"):
        assert value not in logged
