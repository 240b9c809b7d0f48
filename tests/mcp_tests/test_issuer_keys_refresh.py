"""An issuer's keys kept fresh without making requests wait: aged keys answer at once while
one refresh runs behind them, callers queued behind a fetch take its outcome, a failed fetch
is not retried sooner than the interval after it ended, and the discovered key address is
kept. The issuer is a loopback server the test can hold (a slow or hanging issuer); every
wait is a condition with a deadline."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import anyio
import pytest

from mailfathom.entrypoints.mcp.oauth import jwks
from mailfathom.entrypoints.mcp.oauth.authorization_server import (
    AuthorizationServerClient,
    AuthorizationServerUnavailable,
)
from mailfathom.entrypoints.mcp.oauth.jwks import REFETCH_SECONDS, IssuerKeys
from mailfathom.entrypoints.mcp.oauth.jwt_tokens import JwtTokenVerifier
from mcp_tests.key_server import KeyServer, SigningKey, key_server
from mcp_tests.test_jwt_token_verifier import RESOURCE, Clock, config_for

DEADLINE = 20.0
CALLERS = 5


@pytest.fixture
def issuer() -> Iterator[KeyServer]:
    with key_server() as server:
        server.keys.append(SigningKey.rsa())
        yield server


async def until(condition: Callable[[], bool]) -> None:
    with anyio.fail_after(DEADLINE):
        while not condition():
            await anyio.sleep(0.01)


def run(
    issuer: KeyServer,
    clock: Clock,
    check: Callable[[JwtTokenVerifier], Awaitable[None]],
    **changes: Any,
) -> None:
    config = config_for(issuer, **changes)

    async def main() -> None:
        async with AuthorizationServerClient() as client:

            def keys(name: str) -> IssuerKeys:
                return IssuerKeys(client, name, config.jwks_uri, config.jwks_cache_seconds, clock)

            await check(JwtTokenVerifier(config, client, keys))

    anyio.run(main)


async def verify_all(verifier: JwtTokenVerifier, tokens: list[str]) -> list[Any]:
    """Each token's outcome, the checks running at once; within the deadline."""
    found: dict[int, Any] = {}

    async def one(i: int, token: str) -> None:
        found[i] = await verifier.verify_token(token)

    with anyio.fail_after(DEADLINE):
        async with anyio.create_task_group() as group:
            for i, token in enumerate(tokens):
                group.start_soon(one, i, token)
    return [found[i] for i in range(len(tokens))]


def stranger(issuer: KeyServer) -> str:
    """A token signed by a key the issuer never published."""
    return SigningKey.rsa().sign(issuer.claims(RESOURCE))


def test_aged_keys_answer_at_once_while_one_refresh_runs_behind(issuer: KeyServer) -> None:
    clock = Clock()
    token = issuer.keys[0].sign(issuer.claims(RESOURCE))

    async def check(verifier: JwtTokenVerifier) -> None:
        assert await verifier.verify_token(token) is not None
        assert issuer.counts == {"metadata": 1, "jwks": 1}
        clock.now += 600
        # The issuer stops answering: every caller is served from the aged keys at once.
        issuer.released.clear()
        try:
            outcomes = await verify_all(verifier, [token] * CALLERS)
            assert all(found is not None for found in outcomes)
            await until(lambda: issuer.counts["jwks"] == 2)
            # The refresh is still held, and takes longer than the refetch interval. Callers
            # with a key id the aged keys lack wait behind it and take its outcome.
            clock.now += REFETCH_SECONDS + 1
            waiting = [stranger(issuer)] * CALLERS
            async with anyio.create_task_group() as group:
                group.start_soon(verify_all, verifier, waiting)
                await anyio.wait_all_tasks_blocked()
                issuer.up = False
                issuer.released.set()
        finally:
            issuer.released.set()
        assert issuer.counts == {"metadata": 1, "jwks": 2}
        # The failed refresh counts from when it ended: no caller starts another yet.
        assert await verifier.verify_token(token) is not None
        await anyio.wait_all_tasks_blocked()
        assert await verifier.verify_token(stranger(issuer)) is None
        assert issuer.counts == {"metadata": 1, "jwks": 2}
        # The interval past, the issuer back: one refresh, at the address already known.
        issuer.up = True
        clock.now += REFETCH_SECONDS
        assert await verifier.verify_token(token) is not None
        await until(lambda: issuer.counts["jwks"] == 3)
        assert await verifier.verify_token(stranger(issuer)) is None
        assert issuer.counts == {"metadata": 1, "jwks": 3}

    run(issuer, clock, check)


def test_callers_with_a_new_key_id_share_one_fetch_however_long_it_takes(
    issuer: KeyServer,
) -> None:
    clock = Clock()
    first = issuer.keys[0].sign(issuer.claims(RESOURCE))

    async def check(verifier: JwtTokenVerifier) -> None:
        assert await verifier.verify_token(first) is not None
        issuer.keys.insert(0, SigningKey.rsa())
        rotated = issuer.keys[0].sign(issuer.claims(RESOURCE))
        clock.now += REFETCH_SECONDS
        issuer.released.clear()
        outcomes: list[Any] = []

        async def collect() -> None:
            outcomes.extend(await verify_all(verifier, [rotated] * CALLERS))

        try:
            async with anyio.create_task_group() as group:
                group.start_soon(collect)
                await until(lambda: issuer.counts["jwks"] == 2)
                await anyio.wait_all_tasks_blocked()
                clock.now += REFETCH_SECONDS + 1
                issuer.released.set()
        finally:
            issuer.released.set()
        assert len(outcomes) == CALLERS
        assert all(found is not None for found in outcomes)
        assert issuer.counts["jwks"] == 2

    run(issuer, clock, check, jwks_uri=issuer.jwks_uri)


def test_keys_moved_by_the_issuer_are_found_again_through_its_metadata(
    issuer: KeyServer,
) -> None:
    clock = Clock()
    token = issuer.keys[0].sign(issuer.claims(RESOURCE))

    async def check(verifier: JwtTokenVerifier) -> None:
        assert await verifier.verify_token(token) is not None
        issuer.jwks_path = "/keys/v2"
        issuer.keys.insert(0, SigningKey.rsa())
        rotated = issuer.keys[0].sign(issuer.claims(RESOURCE))
        clock.now += 600
        assert await verifier.verify_token(token) is not None
        await until(lambda: issuer.counts["jwks"] == 2)
        assert await verifier.verify_token(stranger(issuer)) is None
        # The old address answered 404: the metadata was read again, once.
        assert issuer.counts == {"metadata": 2, "jwks": 2}
        assert await verifier.verify_token(rotated) is not None
        assert issuer.counts == {"metadata": 2, "jwks": 2}

    run(issuer, clock, check)


def test_the_metadata_is_read_again_after_a_long_interval(issuer: KeyServer) -> None:
    clock = Clock()
    token = issuer.keys[0].sign(issuer.claims(RESOURCE))

    async def check(verifier: JwtTokenVerifier) -> None:
        assert await verifier.verify_token(token) is not None
        clock.now += 600
        assert await verifier.verify_token(token) is not None
        await until(lambda: issuer.counts["jwks"] == 2)
        # Waiting behind the refresh under way, or after it: it is over either way.
        assert await verifier.verify_token(stranger(issuer)) is None
        clock.now += jwks.METADATA_SECONDS
        assert await verifier.verify_token(token) is not None
        await until(lambda: issuer.counts["jwks"] == 3)
        assert await verifier.verify_token(stranger(issuer)) is None
        assert issuer.counts == {"metadata": 2, "jwks": 3}

    run(issuer, clock, check)


def test_a_first_fetch_from_a_hanging_issuer_gives_up_within_its_bound(
    issuer: KeyServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jwks, "FETCH_SECONDS", 0.5)
    token = issuer.keys[0].sign(issuer.claims(RESOURCE))
    issuer.released.clear()

    async def check(verifier: JwtTokenVerifier) -> None:
        with anyio.fail_after(DEADLINE), pytest.raises(AuthorizationServerUnavailable):
            await verifier.verify_token(token)
        # Another caller within the interval is told at once, without another request.
        with pytest.raises(AuthorizationServerUnavailable):
            await verifier.verify_token(token)
        assert issuer.counts == {"metadata": 1}

    run(issuer, Clock(), check)


def test_a_refresh_that_fails_in_a_way_nobody_foresaw_leaves_the_keys_in_use(
    issuer: KeyServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    token = issuer.keys[0].sign(issuer.claims(RESOURCE))

    def broken(document: object) -> object:
        raise RuntimeError("unforeseen")

    async def check(verifier: JwtTokenVerifier) -> None:
        assert await verifier.verify_token(token) is not None
        monkeypatch.setattr(jwks, "_keys_of", broken)
        clock.now += 600
        assert await verifier.verify_token(token) is not None
        await until(lambda: issuer.counts["jwks"] == 2)
        assert await verifier.verify_token(stranger(issuer)) is None
        assert await verifier.verify_token(token) is not None

    run(issuer, clock, check)
