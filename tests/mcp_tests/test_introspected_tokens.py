"""Tokens checked by asking their issuer (RFC 7662): only an active answer for this endpoint
counts, and an answer is kept briefly, by the token's hash, never past the token's expiry."""

from __future__ import annotations

import secrets
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import anyio
import pytest

from mailfathom.domain.mcp_oauth import McpOAuthConfig, TokenValidation
from mailfathom.entrypoints.mcp.oauth import introspection
from mailfathom.entrypoints.mcp.oauth.authorization_server import (
    AuthorizationServerClient,
    AuthorizationServerUnavailable,
)
from mailfathom.entrypoints.mcp.oauth.introspection import (
    CACHE_SECONDS,
    IntrospectionTokenVerifier,
)
from mcp_tests.key_server import KeyServer, key_server

RESOURCE = "https://mail.example.com/mcp"
DEADLINE = 20.0


@pytest.fixture
def issuer() -> Iterator[KeyServer]:
    with key_server() as server:
        yield server


def _config(server: KeyServer, endpoint: str | None = None) -> McpOAuthConfig:
    return McpOAuthConfig(
        resource=RESOURCE,
        authorization_servers=(server.issuer,),
        token_validation=TokenValidation.INTROSPECTION,
        introspection_client_id=server.client[0],
        introspection_endpoint=endpoint,
    )


def _answer(server: KeyServer, **changes: Any) -> dict[str, Any]:
    claims = server.claims(RESOURCE, scope="mailfathom.mail.read mailfathom.mail.send")
    return {"active": True, **claims, **changes}


def _verify_each(
    server: KeyServer,
    tokens: list[str],
    *,
    secret: str | None = None,
    clock: list[float] | None = None,
) -> list[Any]:
    """Each token's outcome, in order, by one verifier; `clock[i]` is the time of the i-th."""

    async def main() -> list[Any]:
        moments = iter(clock or [])
        async with AuthorizationServerClient() as client:
            verifier = IntrospectionTokenVerifier(
                _config(server),
                client,
                lambda: secret or server.client[1],
                lambda: next(moments, time.time()),
            )
            return [await verifier.verify_token(token) for token in tokens]

    return anyio.run(main)


def test_an_active_token_for_this_endpoint_is_accepted(issuer: KeyServer) -> None:
    issuer.answers["opaque-1"] = _answer(issuer)
    (found,) = _verify_each(issuer, ["opaque-1"])
    assert found is not None
    assert found.subject == "person-1"
    assert found.scopes == ["mailfathom.mail.read", "mailfathom.mail.send"]
    assert found.claims == {"iss": issuer.issuer}
    assert found.resource == RESOURCE
    # The endpoint was found in the issuer's metadata.
    assert issuer.counts == {"metadata": 1, "introspection": 1}


@pytest.mark.parametrize(
    "changes",
    [
        {"active": False},
        {"active": "true"},
        {"aud": "https://other.example/mcp"},
        {"aud": None},
        {"iss": "https://impostor.example"},
        {"exp": int(time.time()) - 3600},
        {"exp": None},
        {"nbf": int(time.time()) + 3600},
        {"sub": None},
        {"sub": ""},
    ],
)
def test_an_answer_that_does_not_hold_is_refused(
    issuer: KeyServer, changes: dict[str, Any]
) -> None:
    answer = _answer(issuer, **changes)
    issuer.answers["opaque-1"] = {k: v for k, v in answer.items() if v is not None}
    assert _verify_each(issuer, ["opaque-1"]) == [None]


def test_an_unknown_token_is_refused(issuer: KeyServer) -> None:
    assert _verify_each(issuer, [uuid.uuid4().hex]) == [None]


class RevokedOnceAnswered(dict[str, dict[str, Any]]):
    """The issuer's answers, each token revoked right after its first answer."""

    def get(self, key: str, default: Any = None) -> Any:
        answer = super().get(key, default)
        self[key] = {"active": False}
        return answer


def test_an_answer_is_kept_briefly_and_revocation_counts_after_that(issuer: KeyServer) -> None:
    issuer.answers = RevokedOnceAnswered({"opaque-1": _answer(issuer)})
    now = time.time()
    first, kept, after = _verify_each(
        issuer, ["opaque-1"] * 3, clock=[now, now + 1, now + CACHE_SECONDS + 1]
    )
    assert first is not None
    assert kept is not None
    assert after is None
    assert issuer.counts["introspection"] == 2


def test_an_answer_is_never_kept_past_the_tokens_expiry(issuer: KeyServer) -> None:
    now = time.time()
    issuer.answers["opaque-1"] = _answer(issuer, exp=int(now) + 5)
    _verify_each(issuer, ["opaque-1", "opaque-1"], clock=[now, now + 6])
    assert issuer.counts["introspection"] == 2


def test_a_refused_client_secret_leaves_the_server_unavailable(issuer: KeyServer) -> None:
    issuer.answers["opaque-1"] = _answer(issuer)
    with pytest.raises(AuthorizationServerUnavailable):
        _verify_each(issuer, ["opaque-1"], secret="wrong")


def test_an_issuer_that_cannot_be_reached_is_unavailable(issuer: KeyServer) -> None:
    issuer.up = False
    with pytest.raises(AuthorizationServerUnavailable):
        _verify_each(issuer, ["opaque-1"])


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("mf-" + secrets.token_urlsafe(32), id="init"),
        pytest.param("mf-demo-" + secrets.token_urlsafe(24), id="demo"),
    ],
)
def test_a_value_shaped_like_an_api_key_is_never_sent_to_the_issuer(
    issuer: KeyServer, value: str
) -> None:
    issuer.answers[value] = _answer(issuer)
    assert _verify_each(issuer, [value]) == [None]
    assert issuer.counts == {}


def test_a_refused_token_is_not_asked_about_again_for_a_while(issuer: KeyServer) -> None:
    now = time.time()
    unknown = uuid.uuid4().hex
    moments = [now, now + 1, now + introspection.REFUSAL_SECONDS + 1]
    assert _verify_each(issuer, [unknown] * 3, clock=moments) == [None] * 3
    assert issuer.counts["introspection"] == 2


def test_the_refusals_kept_are_bounded(issuer: KeyServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(introspection, "REFUSALS_KEPT", 2)
    first, second, third = (uuid.uuid4().hex for _ in range(3))
    _verify_each(issuer, [first, second, third, third, first])
    # The first was let go to keep the third; the third is still kept.
    assert issuer.counts["introspection"] == 4


def test_the_client_is_authenticated_with_its_id_and_secret_form_encoded(
    issuer: KeyServer,
) -> None:
    issuer.client = ("resource server:1", "s3cr%t+ \u00e9:x&y=z")
    issuer.answers["opaque-1"] = _answer(issuer)
    (found,) = _verify_each(issuer, ["opaque-1"])
    assert found is not None


async def _until(condition: Callable[[], bool]) -> None:
    with anyio.fail_after(DEADLINE):
        while not condition():
            await anyio.sleep(0.01)


def test_concurrent_lookups_are_bounded(issuer: KeyServer) -> None:
    limit = introspection.CONCURRENT_LOOKUPS
    tokens = [uuid.uuid4().hex for _ in range(3 * limit)]
    issuer.released.clear()
    outcomes: list[Any] = []

    async def main() -> None:
        async with AuthorizationServerClient() as client:
            config = _config(issuer, issuer.introspection_endpoint)
            verifier = IntrospectionTokenVerifier(config, client, lambda: issuer.client[1])

            async def one(token: str) -> None:
                outcomes.append(await verifier.verify_token(token))

            with anyio.fail_after(DEADLINE):
                async with anyio.create_task_group() as group:
                    for token in tokens:
                        group.start_soon(one, token)
                    await _until(lambda: issuer.counts["introspection"] >= limit)
                    await anyio.wait_all_tasks_blocked()
                    issuer.released.set()

    try:
        anyio.run(main)
    finally:
        issuer.released.set()
    assert outcomes == [None] * len(tokens)
    assert issuer.most_in_flight == limit


def test_callers_share_one_discovery_of_the_endpoint(issuer: KeyServer) -> None:
    issuer.released.clear()
    outcomes: list[object] = []

    async def main() -> None:
        async with AuthorizationServerClient() as client:
            verifier = IntrospectionTokenVerifier(
                _config(issuer), client, lambda: issuer.client[1], lambda: 1000.0
            )

            async def one() -> None:
                try:
                    outcomes.append(await verifier.verify_token(uuid.uuid4().hex))
                except AuthorizationServerUnavailable as failure:
                    outcomes.append(failure)

            with anyio.fail_after(DEADLINE):
                async with anyio.create_task_group() as group:
                    for _ in range(5):
                        group.start_soon(one)
                    await _until(lambda: issuer.counts["metadata"] > 0)
                    await anyio.wait_all_tasks_blocked()
                    issuer.up = False
                    issuer.released.set()
                # A failed discovery is not tried again within the interval: the next
                # caller is told at once.
                await one()

    try:
        anyio.run(main)
    finally:
        issuer.released.set()
    assert len(outcomes) == 6
    assert all(isinstance(o, AuthorizationServerUnavailable) for o in outcomes)
    assert issuer.counts == {"metadata": 1}


def test_a_lookup_waits_for_a_free_slot_no_longer_than_its_bound(
    issuer: KeyServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    limit = introspection.CONCURRENT_LOOKUPS
    issuer.released.clear()
    late: list[object] = []

    async def main() -> None:
        async with AuthorizationServerClient() as client:
            config = _config(issuer, issuer.introspection_endpoint)
            verifier = IntrospectionTokenVerifier(config, client, lambda: issuer.client[1])

            async def hold_a_slot() -> None:
                with pytest.raises(AuthorizationServerUnavailable):
                    await verifier.verify_token(uuid.uuid4().hex)

            with anyio.fail_after(DEADLINE):
                async with anyio.create_task_group() as group:
                    for _ in range(limit):
                        group.start_soon(hold_a_slot)
                    await _until(lambda: issuer.counts["introspection"] == limit)
                    # The issuer hangs with every slot taken: the next caller gives up
                    # within its own bound, without a request.
                    monkeypatch.setattr(introspection, "LOOKUP_SECONDS", 0.2)
                    with pytest.raises(AuthorizationServerUnavailable):
                        await verifier.verify_token(uuid.uuid4().hex)
                    late.append(issuer.counts["introspection"])
                    group.cancel_scope.cancel()

    try:
        anyio.run(main)
    finally:
        issuer.released.set()
    assert late == [limit]
