"""One request to a token endpoint: the form it sends and how each kind of answer reads."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

import log_audit
from mailfathom.adapters.oauth.endpoint import (
    MAX_RESPONSE_OCTETS,
    TokenEndpoint,
    TokenResponse,
)
from mailfathom.domain.errors import SyncError, TokenEndpointUnreachable, TokenRefused
from oauth.fake_token_server import FakeTokenServer, error_answer, fake_token_server, token_answer

REFRESH = "refresh-value-never-shown-1"
ACCESS = "access-value-never-shown-1"
CLIENT_SECRET = "client-secret-never-shown-1"
log_audit.register(REFRESH, ACCESS, CLIENT_SECRET)


@pytest.fixture
def server() -> Iterator[FakeTokenServer]:
    with fake_token_server() as running:
        yield running


@pytest.fixture
def endpoint() -> Iterator[TokenEndpoint]:
    client = TokenEndpoint(timeout_seconds=5)
    yield client
    client.close()


def test_a_refresh_posts_the_grant_with_the_client_secret_in_the_body(
    server: FakeTokenServer, endpoint: TokenEndpoint
) -> None:
    server.responder = lambda form: token_answer(ACCESS, 120, refresh_token="rotated", scope="a")
    answer = endpoint.refresh(
        server.url,
        client_id="mf",
        client_secret=CLIENT_SECRET,
        refresh_token=REFRESH,
        scopes=("a", "b"),
    )
    assert answer == TokenResponse(ACCESS, 120.0, "rotated", "a")
    assert server.requests == [
        {
            "grant_type": "refresh_token",
            "client_id": "mf",
            "client_secret": CLIENT_SECRET,
            "refresh_token": REFRESH,
            "scope": "a b",
            "_content_type": "application/x-www-form-urlencoded",
        }
    ]
    assert ACCESS not in repr(answer)
    assert "rotated" not in repr(answer)


def test_a_public_client_names_itself_without_a_secret(
    server: FakeTokenServer, endpoint: TokenEndpoint
) -> None:
    server.responder = lambda form: token_answer(ACCESS, expires_in="3599")
    answer = endpoint.refresh(server.url, client_id="mf", client_secret=None, refresh_token=REFRESH)
    assert answer.expires_in == 3599.0
    assert answer.refresh_token is None
    (form,) = server.requests
    assert "client_secret" not in form
    assert "scope" not in form
    assert form["client_id"] == "mf"


@pytest.mark.parametrize("status", [400, 401])
def test_a_protocol_error_is_refused_by_name_without_the_description(
    server: FakeTokenServer, endpoint: TokenEndpoint, status: int
) -> None:
    server.responder = lambda form: error_answer("invalid_grant", status)
    with pytest.raises(TokenRefused) as caught:
        endpoint.refresh(server.url, client_id="mf", client_secret=None, refresh_token=REFRESH)
    assert caught.value.error == "invalid_grant"
    assert caught.value.code == 31005
    assert "said the server" not in str(caught.value)
    assert REFRESH not in str(caught.value)


def test_an_error_name_outside_the_protocols_characters_is_not_repeated(
    server: FakeTokenServer, endpoint: TokenEndpoint
) -> None:
    server.responder = lambda form: error_answer('bad"name\n')
    with pytest.raises(TokenRefused) as caught:
        endpoint.refresh(server.url, client_id="mf", client_secret=None, refresh_token=REFRESH)
    assert caught.value.error == "unrecognized"


@pytest.mark.parametrize(
    "answer",
    [
        (500, b'{"error": "server_error"}'),
        (200, b"<html>sign in</html>"),
        (200, b'{"token_type": "Bearer"}'),
        (200, b'{"access_token": "x", "token_type": "mac"}'),
        (200, b"[1]"),
        (302, b""),
        (400, b"not json"),
        (200, b'{"access_token": "' + b"x" * MAX_RESPONSE_OCTETS + b'"}'),
    ],
)
def test_an_answer_that_is_not_a_token_response_reads_as_unreachable(
    server: FakeTokenServer, endpoint: TokenEndpoint, answer: tuple[int, bytes]
) -> None:
    server.responder = lambda form: answer
    with pytest.raises(TokenEndpointUnreachable) as caught:
        endpoint.refresh(server.url, client_id="mf", client_secret=None, refresh_token=REFRESH)
    assert caught.value.code == 31004
    assert isinstance(caught.value, SyncError)
    assert "127.0.0.1" in caught.value.message


def test_a_lifetime_that_is_not_a_finite_number_is_not_trusted(
    server: FakeTokenServer, endpoint: TokenEndpoint
) -> None:
    server.responder = lambda form: (
        200,
        b'{"access_token": "x", "token_type": "bearer", "expires_in": NaN}',
    )
    answer = endpoint.refresh(server.url, client_id="mf", client_secret=None, refresh_token=REFRESH)
    assert answer.expires_in is None


def test_a_closed_port_is_unreachable(endpoint: TokenEndpoint) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(TokenEndpointUnreachable):
        endpoint.refresh(
            f"http://127.0.0.1:{port}/token",
            client_id="mf",
            client_secret=None,
            refresh_token=REFRESH,
        )
