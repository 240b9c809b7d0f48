"""The resource server's other settings over HTTP: tokens checked by introspection at the
test authorization server; a `Resource` whose address is not the listener's (behind a
proxy); and an authorization server that cannot be reached, which is no fault of the token."""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import Iterator

import httpx2
import pytest

from mcp_tests.client import tool_names
from mcp_tests.deployment import KEYS, Deployment, _free_port
from mcp_tests.hardened import Served, initialize
from mcp_tests.key_server import SigningKey
from mcp_tests.oauth_deployment import minted, serve_oauth
from mcp_tests.test_read_tools_http import READ_TOOLS
from servers.oauth import OAuthServer

READ = "mailfathom.mail.read"
PUBLIC = "https://mail.example.com/mailfathom/mcp"


@pytest.fixture(scope="module")
def introspecting(mcp_deployment: Deployment, oauth_server: OAuthServer) -> Iterator[Served]:
    client_id, secret = oauth_server.introspection_client
    secret_file = mcp_deployment.config_path.parent / "introspection.secret"
    secret_file.write_text(secret + "\n", "utf-8")
    secret_file.chmod(0o600)
    table = f"""TokenValidation = "introspection"
IntrospectionClientId = "{client_id}"
IntrospectionClientSecret = {{ File = "{secret_file}" }}
"""
    with serve_oauth(mcp_deployment, oauth_server.issuer, table) as served:
        yield served


def test_introspection_admits_an_active_token_and_refuses_the_rest(
    introspecting: Served, oauth_server: OAuthServer
) -> None:
    url = introspecting.url
    before = oauth_server.counts().get("introspection", 0)
    token = minted(oauth_server, "person", url, READ)
    assert set(tool_names(url, token)) == set(READ_TOOLS)
    assert oauth_server.counts().get("introspection", 0) > before
    for refused in (
        minted(oauth_server, "person", url, READ, key="unknown"),
        minted(oauth_server, "person", "http://127.0.0.1:1/mcp", READ),
        minted(oauth_server, "person", url, READ, expires_in=-600),
    ):
        with httpx2.Client(timeout=30) as http:
            answer = initialize(http, url, refused)
        assert answer.status_code == 401
        assert 'error="invalid_token"' in answer.headers["www-authenticate"]
    assert set(tool_names(url, KEYS["reader"])) == set(READ_TOOLS)


def test_a_mistyped_api_key_is_never_sent_to_the_identity_provider(
    introspecting: Served, oauth_server: OAuthServer
) -> None:
    before = oauth_server.counts().get("introspection", 0)
    for mistyped in (KEYS["reader"], secrets.token_urlsafe(32)):
        with httpx2.Client(timeout=30) as http:
            answer = initialize(http, introspecting.url, "mf-" + mistyped)
        assert answer.status_code == 401
        assert 'error="invalid_token"' in answer.headers["www-authenticate"]
        assert "mcp-session-id" not in answer.headers
    assert oauth_server.counts().get("introspection", 0) == before


@pytest.fixture(scope="module")
def unreachable_issuer(mcp_deployment: Deployment) -> Iterator[tuple[Served, str]]:
    """An endpoint published at `PUBLIC` (a proxy's address) trusting an issuer on a port
    nothing listens on."""
    issuer = f"http://127.0.0.1:{_free_port()}"
    base = mcp_deployment
    with serve_oauth(base, issuer, resource=PUBLIC) as served:
        yield served, issuer


def test_behind_a_proxy_the_configured_resource_is_published_not_the_listener(
    unreachable_issuer: tuple[Served, str],
) -> None:
    served, issuer = unreachable_issuer
    origin = served.url.removesuffix("/mcp")
    with httpx2.Client(timeout=30) as http:
        answer = http.post(served.url, json={}, headers={"Accept": "application/json"})
        assert answer.status_code == 401
        found = re.search(r'resource_metadata="([^"]+)"', answer.headers["www-authenticate"])
        assert found is not None
        assert found.group(1) == (
            "https://mail.example.com/.well-known/oauth-protected-resource/mailfathom/mcp"
        )
        # The proxy forwards the well-known path unchanged; each address answers alike.
        for path in ("/mailfathom/mcp", "/mcp", ""):
            document = http.get(origin + "/.well-known/oauth-protected-resource" + path).json()
            assert document["resource"] == PUBLIC
            assert document["authorization_servers"] == [issuer]


def test_an_issuer_that_cannot_be_reached_is_answered_503_not_401(
    unreachable_issuer: tuple[Served, str],
) -> None:
    served, issuer = unreachable_issuer
    now = int(time.time())
    token = SigningKey.rsa().sign(
        {"iss": issuer, "sub": "someone", "aud": PUBLIC, "iat": now, "exp": now + 300}
    )
    with httpx2.Client(timeout=30) as http:
        answer = initialize(http, served.url, token)
    assert answer.status_code == 503
    assert int(answer.headers["retry-after"]) > 0
    assert "mcp-session-id" not in answer.headers
    assert "www-authenticate" not in answer.headers
