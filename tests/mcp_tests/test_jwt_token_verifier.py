"""Signed access tokens checked against keys the test made and a loopback server publishes:
issuer, audience, time, signature and key rotation, each refused or accepted on its own."""

from __future__ import annotations

import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import replace
from typing import Any, TypeVar

import anyio
import jwt
import pytest
import structlog

from mailfathom.domain.mcp_oauth import McpOAuthConfig
from mailfathom.entrypoints.mcp.oauth.authorization_server import (
    AuthorizationServerClient,
    AuthorizationServerUnavailable,
)
from mailfathom.entrypoints.mcp.oauth.jwks import REFETCH_SECONDS, IssuerKeys
from mailfathom.entrypoints.mcp.oauth.jwt_tokens import JwtTokenVerifier
from mcp_tests.key_server import KeyServer, SigningKey, key_server

RESOURCE = "https://mail.example.com/mcp"
T = TypeVar("T")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def issuer() -> Iterator[KeyServer]:
    with key_server() as server:
        server.keys.append(SigningKey.rsa())
        yield server


def config_for(server: KeyServer, **changes: Any) -> McpOAuthConfig:
    return replace(
        McpOAuthConfig(resource=RESOURCE, authorization_servers=(server.issuer,)), **changes
    )


def run(
    config: McpOAuthConfig,
    check: Callable[[JwtTokenVerifier], Awaitable[T]],
    clock: Callable[[], float] | None = None,
) -> T:
    async def main() -> T:
        async with AuthorizationServerClient() as client:

            def keys(issuer: str) -> IssuerKeys:
                return IssuerKeys(
                    client,
                    issuer,
                    config.jwks_uri,
                    config.jwks_cache_seconds,
                    clock or time.monotonic,
                )

            return await check(JwtTokenVerifier(config, client, keys))

    return anyio.run(main)


def verify(server: KeyServer, token: str, **changes: Any) -> Any:
    async def check(verifier: JwtTokenVerifier) -> Any:
        return await verifier.verify_token(token)

    return run(config_for(server, **changes), check)


def test_a_token_for_this_endpoint_is_accepted_with_its_subject_and_scopes(
    issuer: KeyServer,
) -> None:
    claims = issuer.claims(RESOURCE, scope="mailfathom.mail.read mailfathom.mail.send")
    found = verify(issuer, issuer.keys[0].sign(claims, typ="at+jwt"))
    assert found is not None
    assert found.subject == "person-1"
    assert found.scopes == ["mailfathom.mail.read", "mailfathom.mail.send"]
    assert found.client_id == "client-1"
    assert found.resource == RESOURCE
    assert found.claims == {"iss": issuer.issuer}
    assert found.expires_at == claims["exp"]
    assert issuer.counts == {"metadata": 1, "jwks": 1}


@pytest.mark.parametrize(
    "scopes",
    [
        {"scp": "mailfathom.mail.read mailfathom.mail.send"},
        {"scp": ["mailfathom.mail.read", "mailfathom.mail.send"]},
    ],
)
def test_scopes_are_read_from_scp_as_a_string_or_a_list(
    issuer: KeyServer, scopes: dict[str, Any]
) -> None:
    claims = issuer.claims(RESOURCE)
    del claims["scope"]
    found = verify(issuer, issuer.keys[0].sign({**claims, **scopes}))
    assert found is not None
    assert found.scopes == ["mailfathom.mail.read", "mailfathom.mail.send"]


@pytest.mark.parametrize(
    ("audience", "accepted"),
    [
        (RESOURCE, True),
        (RESOURCE + "/", True),
        (["https://other.example/api", RESOURCE], True),
        ("api://6d1c", True),
        ("https://other.example/mcp", False),
        (["https://other.example/mcp"], False),
        ("https://mail.example.com/mcp/other", False),
        ("", False),
    ],
)
def test_the_audience_must_name_this_endpoint_or_a_configured_audience(
    issuer: KeyServer, audience: str | list[str], accepted: bool
) -> None:
    token = issuer.keys[0].sign(issuer.claims(audience))
    assert (verify(issuer, token, audiences=("api://6d1c",)) is not None) is accepted


@pytest.mark.parametrize(
    ("times", "accepted"),
    [
        ({"exp": -120}, False),
        ({"exp": -30}, True),
        ({"nbf": 120}, False),
        ({"nbf": 30}, True),
        ({"iat": 120}, False),
        ({"iat": 30}, True),
    ],
)
def test_times_are_checked_within_the_configured_skew(
    issuer: KeyServer, times: dict[str, int], accepted: bool
) -> None:
    now = int(time.time())
    claims = {**issuer.claims(RESOURCE), **{k: now + v for k, v in times.items()}}
    token = issuer.keys[0].sign(claims)
    assert (verify(issuer, token, clock_skew_seconds=60) is not None) is accepted


@pytest.mark.parametrize("missing", ["exp", "sub", "aud", "iss"])
def test_a_token_without_a_required_claim_is_refused(issuer: KeyServer, missing: str) -> None:
    claims = issuer.claims(RESOURCE)
    del claims[missing]
    assert verify(issuer, issuer.keys[0].sign(claims)) is None


def test_a_token_of_an_issuer_not_configured_is_refused_without_any_request(
    issuer: KeyServer,
) -> None:
    claims = issuer.claims(RESOURCE, iss="http://127.0.0.1:9/elsewhere")
    assert verify(issuer, issuer.keys[0].sign(claims)) is None
    assert issuer.counts == {}


def test_a_tampered_or_foreign_signature_is_refused(issuer: KeyServer) -> None:
    token = issuer.keys[0].sign(issuer.claims(RESOURCE, sub="person-1"))
    header, _payload, signature = token.split(".")
    forged = issuer.keys[0].sign(issuer.claims(RESOURCE, sub="person-2")).split(".")[1]
    assert verify(issuer, f"{header}.{forged}.{signature}") is None
    impostor = SigningKey("kid-of-another", "RS256", SigningKey.rsa().private)
    impostor.kid = issuer.keys[0].kid
    assert verify(issuer, impostor.sign(issuer.claims(RESOURCE))) is None


def test_unsigned_and_shared_secret_tokens_are_refused(issuer: KeyServer) -> None:
    claims = issuer.claims(RESOURCE)
    unsigned = jwt.encode(claims, "", algorithm="none")
    assert verify(issuer, unsigned) is None
    # The public key's own bytes as an HMAC secret: the classic algorithm confusion.
    public = issuer.keys[0].jwk()["n"].encode()
    shared = jwt.encode(claims, public, algorithm="HS256", headers={"kid": issuer.keys[0].kid})
    assert verify(issuer, shared) is None


def test_only_configured_algorithms_are_accepted(issuer: KeyServer) -> None:
    issuer.keys.append(SigningKey.ec())
    token = issuer.keys[1].sign(issuer.claims(RESOURCE))
    assert verify(issuer, token) is not None
    assert verify(issuer, token, algorithms=("RS256",)) is None


@pytest.mark.parametrize("kind", ["JWT", "at+jwt", "application/at+JWT"])
def test_an_access_token_type_is_accepted(issuer: KeyServer, kind: str) -> None:
    assert verify(issuer, issuer.keys[0].sign(issuer.claims(RESOURCE), typ=kind)) is not None


@pytest.mark.parametrize("kind", ["logout+jwt", "dpop+jwt", "secevent+jwt"])
def test_a_token_of_another_type_is_refused(issuer: KeyServer, kind: str) -> None:
    assert verify(issuer, issuer.keys[0].sign(issuer.claims(RESOURCE), typ=kind)) is None


@pytest.mark.parametrize("token", ["", "not-a-token", "a.b.c", "e30.e30.", "x" * 5000])
def test_text_that_is_no_token_is_refused(issuer: KeyServer, token: str) -> None:
    assert verify(issuer, token) is None


def test_a_value_shaped_like_an_api_key_is_never_read_as_a_token(issuer: KeyServer) -> None:
    # Even a good token behind the prefix: what starts like this deployment's keys is one.
    value = "mf-" + issuer.keys[0].sign(issuer.claims(RESOURCE))
    with structlog.testing.capture_logs() as logged:
        assert verify(issuer, value) is None
    reasons = [e.get("reason") for e in logged if e["event"] == "oauth.token_refused"]
    assert reasons == ["shaped like an API key"]
    assert issuer.counts == {}


def test_a_configured_key_address_is_read_without_the_metadata(issuer: KeyServer) -> None:
    token = issuer.keys[0].sign(issuer.claims(RESOURCE))
    assert verify(issuer, token, jwks_uri=issuer.jwks_uri) is not None
    assert issuer.counts == {"jwks": 1}


def test_metadata_naming_another_issuer_is_not_this_issuers(issuer: KeyServer) -> None:
    issuer.metadata_issuer = "https://impostor.example"
    token = issuer.keys[0].sign(issuer.claims(RESOURCE))
    with pytest.raises(AuthorizationServerUnavailable):
        verify(issuer, token)
    assert issuer.counts["jwks"] == 0


def test_rotated_keys_are_fetched_and_a_flood_of_unknown_keys_is_not(issuer: KeyServer) -> None:
    clock = Clock()
    config = config_for(issuer, jwks_uri=issuer.jwks_uri)
    first = issuer.keys[0].sign(issuer.claims(RESOURCE))

    async def check(verifier: JwtTokenVerifier) -> None:
        assert await verifier.verify_token(first) is not None
        assert issuer.counts["jwks"] == 1
        # A flood of tokens naming key ids nobody published, all within one interval: the
        # first fetches the keys again, the rest wait for the interval to pass.
        clock.now += REFETCH_SECONDS
        stranger = SigningKey.rsa()
        for _ in range(50):
            stranger.kid = uuid.uuid4().hex
            assert await verifier.verify_token(stranger.sign(issuer.claims(RESOURCE))) is None
        assert issuer.counts["jwks"] == 2
        # The issuer rotates: its new key is fetched once the interval has passed.
        issuer.keys.insert(0, SigningKey.rsa())
        rotated = issuer.keys[0].sign(issuer.claims(RESOURCE))
        clock.now += REFETCH_SECONDS
        assert await verifier.verify_token(rotated) is not None
        assert await verifier.verify_token(first) is not None
        assert issuer.counts["jwks"] == 3
        # The old key withdrawn: the first token after the cache has aged is still checked
        # with the aged keys while they are fetched again, and the old key's tokens fail once
        # they have been.
        issuer.keys.pop()
        clock.now += config.jwks_cache_seconds
        assert await verifier.verify_token(first) is not None
        with anyio.fail_after(20):
            while await verifier.verify_token(first) is not None:
                await anyio.sleep(0.01)
        assert await verifier.verify_token(rotated) is not None
        assert issuer.counts["jwks"] == 4

    run(config, check, clock)


def test_keys_already_fetched_are_used_while_the_issuer_is_down(issuer: KeyServer) -> None:
    clock = Clock()
    config = config_for(issuer)
    token = issuer.keys[0].sign(issuer.claims(RESOURCE))

    async def check(verifier: JwtTokenVerifier) -> None:
        assert await verifier.verify_token(token) is not None
        issuer.up = False
        clock.now += config.jwks_cache_seconds + REFETCH_SECONDS
        assert await verifier.verify_token(token) is not None

    run(config, check, clock)


def test_an_issuer_never_reached_is_unavailable_rather_than_the_token_wrong(
    issuer: KeyServer,
) -> None:
    issuer.up = False
    token = issuer.keys[0].sign(issuer.claims(RESOURCE))
    with pytest.raises(AuthorizationServerUnavailable):
        verify(issuer, token)
