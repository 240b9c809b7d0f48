"""The test authorization server speaks OAuth 2.0 / 2.1 as a client meets it over HTTP.

Everything here goes through the server's own endpoints with a plain HTTP client: metadata,
dynamic registration, the authorization code with PKCE, the device grant and each of its
answers, refresh with and without rotation, revocation, introspection, the JWKS and the
signatures of the access tokens.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import jwt
import pytest
from authlib.oauth2.rfc8414 import AuthorizationServerMetadata
from authlib.oauth2.rfc9207 import AuthorizationServerMetadata as IssuerMetadata

from servers.oauth import DEVICE_GRANT, OAuthServer, device_grant

REDIRECT = "http://127.0.0.1/callback"
RESOURCE = "https://mail.example.test/mcp"


@pytest.fixture
def server(oauth_server: OAuthServer) -> Iterator[OAuthServer]:
    """The session's server, its settings back at their start values after the test."""
    yield oauth_server
    oauth_server.approve_authorizations_as(None)
    oauth_server.set_access_token_lifetime(3600)
    oauth_server.set_device_code_lifetime(600)
    oauth_server.set_refresh_rotation(True)


@pytest.fixture
def public_client(server: OAuthServer) -> str:
    client_id = f"app-{uuid.uuid4().hex[:8]}"
    server.add_client(client_id, redirect_uris=[REDIRECT])
    return client_id


def _pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode()).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def _authorize(server: OAuthServer, client_id: str, **params: str) -> dict[str, str]:
    """Follow the authorization endpoint's answer: the parameters of its redirect."""
    answer = httpx2.get(
        server.authorization_endpoint,
        params={"response_type": "code", "client_id": client_id, "state": "s1", **params},
    )
    assert answer.status_code == 302, answer.text
    location = answer.headers["location"]
    assert location.split("?")[0] == params["redirect_uri"]
    return {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}


def _token(server: OAuthServer, **form: str) -> httpx2.Response:
    return httpx2.post(server.token_endpoint, data=form)


def _introspect(server: OAuthServer, token: str) -> dict[str, Any]:
    answer = httpx2.post(
        server.introspection_endpoint, data={"token": token}, auth=server.introspection_client
    )
    assert answer.status_code == 200, answer.text
    found: dict[str, Any] = answer.json()
    return found


def _verified(server: OAuthServer, token: str, audience: str) -> dict[str, Any]:
    keys = jwt.PyJWKSet.from_dict(httpx2.get(server.jwks_uri).json())
    kid = jwt.get_unverified_header(token)["kid"]
    key = next(k for k in keys.keys if k.key_id == kid)
    claims: dict[str, Any] = jwt.decode(
        token, key, algorithms=["RS256"], audience=audience, issuer=server.issuer
    )
    return claims


def _authorize_with_pkce(
    server: OAuthServer, client_id: str, subject: str | None, **params: str
) -> tuple[str, dict[str, str]]:
    """An authorization request with S256 PKCE, approved (or refused) as `subject`: the
    verifier and the parameters of the redirect back."""
    server.approve_authorizations_as(subject)
    verifier, challenge = _pkce()
    params.setdefault("redirect_uri", REDIRECT)
    back = _authorize(
        server, client_id, code_challenge=challenge, code_challenge_method="S256", **params
    )
    return verifier, back


def _exchange(
    server: OAuthServer, client_id: str, code: str, verifier: str, **form: str
) -> httpx2.Response:
    form.setdefault("redirect_uri", REDIRECT)
    return _token(
        server,
        grant_type="authorization_code",
        client_id=client_id,
        code=code,
        code_verifier=verifier,
        **form,
    )


def _refresh(server: OAuthServer, client_id: str, refresh_token: str) -> httpx2.Response:
    return _token(
        server, grant_type="refresh_token", client_id=client_id, refresh_token=refresh_token
    )


def _code_flow(server: OAuthServer, client_id: str, subject: str) -> dict[str, Any]:
    redirect = "http://127.0.0.1:43123/callback"
    verifier, back = _authorize_with_pkce(
        server,
        client_id,
        subject,
        redirect_uri=redirect,
        resource=RESOURCE,
        scope="mailfathom.mail.read",
    )
    answer = _exchange(
        server, client_id, back["code"], verifier, redirect_uri=redirect, resource=RESOURCE
    )
    assert answer.status_code == 200, answer.text
    tokens: dict[str, Any] = answer.json()
    return tokens


def test_metadata_is_valid_rfc8414_and_names_every_endpoint(server: OAuthServer) -> None:
    metadata = httpx2.get(server.metadata_url).json()
    AuthorizationServerMetadata(metadata).validate(metadata_classes=[IssuerMetadata])
    assert metadata["issuer"] == server.issuer
    assert metadata["token_endpoint"] == server.token_endpoint
    assert metadata["authorization_endpoint"] == server.authorization_endpoint
    assert metadata["device_authorization_endpoint"] == server.device_authorization_endpoint
    assert metadata["registration_endpoint"] == server.registration_endpoint
    assert metadata["revocation_endpoint"] == server.revocation_endpoint
    assert metadata["introspection_endpoint"] == server.introspection_endpoint
    assert metadata["jwks_uri"] == server.jwks_uri
    assert metadata["code_challenge_methods_supported"] == ["S256"]


def test_code_flow_with_pkce_gives_a_signed_token_for_the_resource(
    server: OAuthServer, public_client: str
) -> None:
    tokens = _code_flow(server, public_client, "alice@example.test")
    claims = _verified(server, tokens["access_token"], RESOURCE)
    assert claims["sub"] == "alice@example.test"
    assert claims["client_id"] == public_client
    assert claims["scope"] == "mailfathom.mail.read"
    assert jwt.get_unverified_header(tokens["access_token"])["typ"] == "at+jwt"
    assert tokens["refresh_token"]
    assert server.counts()["code"] >= 1


def test_authorization_response_names_the_issuer_and_keeps_the_state(
    server: OAuthServer, public_client: str
) -> None:
    _, back = _authorize_with_pkce(server, public_client, "alice")
    assert back["iss"] == server.issuer
    assert back["state"] == "s1"


@pytest.mark.parametrize(
    "pkce",
    [{}, {"code_challenge_method": "plain"}, {"code_challenge_method": "S256"}],
    ids=["no-challenge", "plain", "method-without-challenge"],
)
def test_authorization_without_s256_pkce_is_refused(
    server: OAuthServer, public_client: str, pkce: dict[str, str]
) -> None:
    server.approve_authorizations_as("alice")
    if pkce.get("code_challenge_method") == "plain":
        pkce = {**pkce, "code_challenge": secrets.token_urlsafe(48)}
    back = _authorize(server, public_client, redirect_uri=REDIRECT, **pkce)
    assert back["error"] == "invalid_request"
    assert "code" not in back


def test_a_wrong_code_verifier_is_refused(server: OAuthServer, public_client: str) -> None:
    _, back = _authorize_with_pkce(server, public_client, "alice")
    other_verifier, _ = _pkce()
    answer = _exchange(server, public_client, back["code"], other_verifier)
    assert answer.status_code == 400
    assert answer.json()["error"] == "invalid_grant"


def test_a_refused_authorization_redirects_with_access_denied(
    server: OAuthServer, public_client: str
) -> None:
    _, back = _authorize_with_pkce(server, public_client, None)
    assert back["error"] == "access_denied"


def test_a_token_for_another_resource_than_authorized_is_refused(
    server: OAuthServer, public_client: str
) -> None:
    verifier, back = _authorize_with_pkce(server, public_client, "alice", resource=RESOURCE)
    answer = _exchange(
        server, public_client, back["code"], verifier, resource="https://elsewhere.example.test/"
    )
    assert answer.status_code == 400
    assert answer.json()["error"] == "invalid_target"


def test_dynamic_registration_of_a_public_client_then_the_code_flow(
    server: OAuthServer,
) -> None:
    answer = httpx2.post(
        server.registration_endpoint,
        json={
            "client_name": "An MCP client",
            "redirect_uris": ["http://127.0.0.1:33333/callback"],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        },
    )
    assert answer.status_code == 201, answer.text
    registered = answer.json()
    assert registered["token_endpoint_auth_method"] == "none"
    assert "client_secret" not in registered
    tokens = _code_flow(server, registered["client_id"], "bob")
    assert _introspect(server, tokens["access_token"])["username"] == "bob"


def test_dynamic_registration_of_a_confidential_client_issues_a_secret(
    server: OAuthServer,
) -> None:
    answer = httpx2.post(
        server.registration_endpoint, json={"redirect_uris": ["https://app.example.test/cb"]}
    )
    assert answer.status_code == 201, answer.text
    registered = answer.json()
    assert registered["token_endpoint_auth_method"] == "client_secret_basic"
    assert registered["client_secret"]


def test_device_grant_pending_slow_down_then_tokens(
    server: OAuthServer, public_client: str
) -> None:
    started = httpx2.post(
        server.device_authorization_endpoint,
        data={"client_id": public_client, "scope": "mail", "resource": RESOURCE},
    ).json()
    assert started["verification_uri"] == f"{server.issuer}/device"
    poll = {"grant_type": DEVICE_GRANT, "client_id": public_client}
    first = _token(server, device_code=started["device_code"], **poll)
    assert first.json()["error"] == "authorization_pending"
    second = _token(server, device_code=started["device_code"], **poll)
    assert second.json()["error"] == "slow_down"
    server.approve_device(started["user_code"], "carol")
    granted = _token(server, device_code=started["device_code"], **poll)
    assert granted.status_code == 200, granted.text
    claims = _verified(server, granted.json()["access_token"], RESOURCE)
    assert claims["sub"] == "carol"
    assert claims["scope"] == "mail"
    used_again = _token(server, device_code=started["device_code"], **poll)
    assert used_again.status_code == 400


def test_device_grant_denied(server: OAuthServer, public_client: str) -> None:
    started = httpx2.post(
        server.device_authorization_endpoint, data={"client_id": public_client}
    ).json()
    server.deny_device(started["user_code"])
    answer = _token(
        server, grant_type=DEVICE_GRANT, client_id=public_client, device_code=started["device_code"]
    )
    assert answer.json()["error"] == "access_denied"


def test_device_grant_expired(server: OAuthServer, public_client: str) -> None:
    server.set_device_code_lifetime(1)
    started = httpx2.post(
        server.device_authorization_endpoint, data={"client_id": public_client}
    ).json()
    assert started["expires_in"] == 1
    time.sleep(1.2)
    answer = _token(
        server, grant_type=DEVICE_GRANT, client_id=public_client, device_code=started["device_code"]
    )
    assert answer.json()["error"] == "expired_token"


def test_refresh_rotates_and_the_old_refresh_token_is_refused(
    server: OAuthServer, public_client: str
) -> None:
    first = device_grant(server, client_id=public_client, subject="dave", resource=RESOURCE)
    answer = _refresh(server, public_client, first["refresh_token"])
    assert answer.status_code == 200, answer.text
    second = answer.json()
    assert second["refresh_token"] != first["refresh_token"]
    assert _verified(server, second["access_token"], RESOURCE)["sub"] == "dave"
    again = _refresh(server, public_client, first["refresh_token"])
    assert again.status_code == 400
    assert again.json()["error"] == "invalid_grant"


def test_refresh_without_rotation_keeps_the_refresh_token(
    server: OAuthServer, public_client: str
) -> None:
    server.set_refresh_rotation(False)
    first = device_grant(server, client_id=public_client, subject="erin")
    for _ in range(2):
        answer = _refresh(server, public_client, first["refresh_token"])
        assert answer.status_code == 200, answer.text
        assert "refresh_token" not in answer.json()


def test_introspection_answers_active_until_the_token_expires(
    server: OAuthServer, public_client: str
) -> None:
    # Long enough that a loaded machine still introspects before it ends.
    server.set_access_token_lifetime(5)
    tokens = device_grant(server, client_id=public_client, subject="frank", resource=RESOURCE)
    assert tokens["expires_in"] == 5
    found = _introspect(server, tokens["access_token"])
    assert found["active"] is True
    assert found["username"] == "frank"
    assert found["aud"] == RESOURCE
    assert found["client_id"] == public_client
    assert found["exp"] > found["iat"]
    deadline = time.monotonic() + 30
    while _introspect(server, tokens["access_token"])["active"]:
        assert time.monotonic() < deadline
        time.sleep(0.2)


def test_introspection_needs_client_authentication(server: OAuthServer, public_client: str) -> None:
    tokens = device_grant(server, client_id=public_client, subject="gina")
    anonymous = httpx2.post(server.introspection_endpoint, data={"token": tokens["access_token"]})
    assert anonymous.status_code == 401
    as_public = httpx2.post(
        server.introspection_endpoint,
        data={"token": tokens["access_token"], "client_id": public_client},
    )
    assert as_public.status_code in (400, 401)
    assert "active" not in as_public.json()


def test_a_garbage_token_is_inactive(server: OAuthServer) -> None:
    assert _introspect(server, "not-a-token") == {"active": False}


def test_revoking_an_access_token(server: OAuthServer, public_client: str) -> None:
    tokens = device_grant(server, client_id=public_client, subject="hank")
    answer = httpx2.post(
        server.revocation_endpoint,
        data={"token": tokens["access_token"], "client_id": public_client},
    )
    assert answer.status_code == 200
    assert _introspect(server, tokens["access_token"]) == {"active": False}
    assert _introspect(server, tokens["refresh_token"])["active"] is True


def test_revoking_a_refresh_token_ends_its_grant(server: OAuthServer, public_client: str) -> None:
    tokens = device_grant(server, client_id=public_client, subject="ivy")
    answer = httpx2.post(
        server.revocation_endpoint,
        data={
            "token": tokens["refresh_token"],
            "token_type_hint": "refresh_token",
            "client_id": public_client,
        },
    )
    assert answer.status_code == 200
    assert _introspect(server, tokens["access_token"]) == {"active": False}
    refused = _refresh(server, public_client, tokens["refresh_token"])
    assert refused.json()["error"] == "invalid_grant"


def _revoke_refresh(server: OAuthServer, client_id: str, refresh_token: str) -> None:
    answer = httpx2.post(
        server.revocation_endpoint,
        data={"token": refresh_token, "token_type_hint": "refresh_token", "client_id": client_id},
    )
    assert answer.status_code == 200


def test_revoking_a_rotated_out_refresh_token_leaves_the_grant_working(
    server: OAuthServer, public_client: str
) -> None:
    subject = f"max-{uuid.uuid4().hex[:6]}"
    first = device_grant(server, client_id=public_client, subject=subject)
    current = _refresh(server, public_client, first["refresh_token"]).json()["refresh_token"]
    _revoke_refresh(server, public_client, first["refresh_token"])
    assert server.live_refresh_tokens(subject) == 1
    _revoke_refresh(server, public_client, current)
    assert server.live_refresh_tokens(subject) == 0
    assert _refresh(server, public_client, current).json()["error"] == "invalid_grant"


def test_a_client_revoked_by_whole_authorization(server: OAuthServer) -> None:
    # As at Google: revoking one token ends every grant the subject gave the client, and
    # nobody else's.
    client_id = f"app-{uuid.uuid4().hex[:8]}"
    server.add_client(client_id, whole_authorization=True)
    subject = f"lea-{uuid.uuid4().hex[:6]}"
    first, second = (device_grant(server, client_id=client_id, subject=subject) for _ in "12")
    other = device_grant(server, client_id=client_id, subject=f"other-{subject}")
    answer = httpx2.post(
        server.revocation_endpoint,
        data={"token": second["access_token"], "client_id": client_id},
    )
    assert answer.status_code == 200
    for issued in (first, second):
        assert _introspect(server, issued["access_token"]) == {"active": False}
        refused = _refresh(server, client_id, issued["refresh_token"])
        assert refused.json()["error"] == "invalid_grant"
    assert _refresh(server, client_id, other["refresh_token"]).status_code == 200


def test_revoke_refresh_tokens_of_a_subject(server: OAuthServer, public_client: str) -> None:
    subject = f"jack-{uuid.uuid4().hex[:6]}"
    tokens = [device_grant(server, client_id=public_client, subject=subject) for _ in range(2)]
    other = device_grant(server, client_id=public_client, subject="someone-else")
    assert server.revoke_refresh_tokens(subject) == 2
    for issued in tokens:
        refused = _refresh(server, public_client, issued["refresh_token"])
        assert refused.json()["error"] == "invalid_grant"
    still = _refresh(server, public_client, other["refresh_token"])
    assert still.status_code == 200


def test_minted_tokens_by_the_served_key_and_by_an_unknown_key(server: OAuthServer) -> None:
    good = server.mint_access_token("kim", audience=RESOURCE, scopes=["a", "b"])
    claims = _verified(server, good, RESOURCE)
    assert (claims["sub"], claims["scope"], claims["client_id"]) == ("kim", "a b", "minted")
    assert _introspect(server, good)["active"] is True
    forged = server.mint_access_token("kim", audience=RESOURCE, scopes=["a"], key="unknown")
    published = {k["kid"] for k in httpx2.get(server.jwks_uri).json()["keys"]}
    assert jwt.get_unverified_header(forged)["kid"] not in published
    for jwk in jwt.PyJWKSet.from_dict(httpx2.get(server.jwks_uri).json()).keys:
        with pytest.raises(jwt.InvalidSignatureError):
            jwt.decode(forged, jwk, algorithms=["RS256"], audience=RESOURCE)
    assert _introspect(server, forged) == {"active": False}


def test_an_expired_minted_token(server: OAuthServer) -> None:
    token = server.mint_access_token("lea", audience=RESOURCE, scopes=["a"], expires_in=-60)
    with pytest.raises(jwt.ExpiredSignatureError):
        _verified(server, token, RESOURCE)
    assert _introspect(server, token) == {"active": False}


def test_key_rotation_serves_the_new_key_and_keeps_the_old(
    server: OAuthServer, public_client: str
) -> None:
    before = server.mint_access_token("max", audience=RESOURCE, scopes=[])
    server.rotate_signing_key()
    after = device_grant(server, client_id=public_client, subject="max", resource=RESOURCE)
    old_kid = jwt.get_unverified_header(before)["kid"]
    new_kid = jwt.get_unverified_header(after["access_token"])["kid"]
    assert old_kid != new_kid
    published = {k["kid"] for k in httpx2.get(server.jwks_uri).json()["keys"]}
    assert {old_kid, new_kid} <= published
    assert _verified(server, before, RESOURCE)["sub"] == "max"
    assert _verified(server, after["access_token"], RESOURCE)["sub"] == "max"


def test_control_route_needs_the_secret(server: OAuthServer) -> None:
    answer = httpx2.post(f"{server.issuer}/control/rotate_signing_key", json={})
    assert answer.status_code == 403
    answer = httpx2.post(
        f"{server.issuer}/control/rotate_signing_key",
        json={},
        headers={"X-Control-Secret": "wrong"},
    )
    assert answer.status_code == 403
