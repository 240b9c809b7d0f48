"""What the device flow takes from an authorization server it cannot trust to be careful:
answers past any size, lifetimes and intervals past reason, pages to send the person to in
the clear, codes that would write to the terminal, and a token endpoint that stumbles."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from mailfathom.adapters.oauth.flows import DevicePrompt, OAuthClient, device_grant
from mailfathom.domain.errors import GrantFailed
from oauth.fake_token_server import Answer, FakeTokenServer, fake_token_server, token_answer

from .flood_host import FLOOD_OCTETS, flood_host

CLIENT = OAuthClient("mailfathom", ("mail",))


def _device_answer(**changes: object) -> Answer:
    body: dict[str, object] = {
        "device_code": "device-code",
        "user_code": "WDJB-MJHT",
        "verification_uri": "https://id.example.org/device",
        "expires_in": 900,
        "interval": 5,
    }
    body.update(changes)
    return 200, json.dumps({k: v for k, v in body.items() if v is not None}).encode()


@pytest.fixture
def server() -> Iterator[FakeTokenServer]:
    with fake_token_server() as fake:
        yield fake


def _serve(server: FakeTokenServer, device: Answer, *polls: Answer) -> None:
    """The device authorization answer, then one answer per poll (the last repeated)."""
    answers = list(polls) or [token_answer("access", refresh_token="refresh")]

    def respond(form: dict[str, str]) -> Answer:
        if "grant_type" not in form:
            return device
        return answers.pop(0) if len(answers) > 1 else answers[0]

    server.responder = respond


def _run(server: FakeTokenServer, sleeps: list[float] | None = None) -> list[DevicePrompt]:
    shown: list[DevicePrompt] = []
    waits = [] if sleeps is None else sleeps
    device_grant(server.url, server.url, CLIENT, shown.append, sleep=waits.append)
    return shown


def _refused(server: FakeTokenServer) -> tuple[int, list[DevicePrompt]]:
    shown: list[DevicePrompt] = []
    with pytest.raises(GrantFailed) as failed:
        device_grant(server.url, server.url, CLIENT, shown.append, sleep=lambda s: None)
    return failed.value.code, shown


def test_a_device_answer_past_the_bound_is_not_read_to_its_end() -> None:
    with flood_host() as flood:
        with pytest.raises(GrantFailed) as failed:
            device_grant(flood.url, flood.url, CLIENT, lambda p: None, sleep=lambda s: None)
        assert flood.done.wait(30)
    assert failed.value.code == 72007
    assert flood.sent < FLOOD_OCTETS


def test_a_lifetime_and_an_interval_past_reason_are_held_to_bounds(
    server: FakeTokenServer,
) -> None:
    _serve(server, _device_answer(expires_in=10**9, interval=10**6))
    sleeps: list[float] = []
    (prompt,) = _run(server, sleeps)
    assert prompt.expires_in == 1800
    assert sleeps == [60.0]


@pytest.mark.parametrize(
    "changes",
    [
        {"verification_uri": "http://id.example.org/device"},
        {"verification_uri": "file:///etc/passwd"},
        {"verification_uri": "https://id.example.org/\x1b]8;;https://elsewhere\x07device"},
        {"verification_uri": "https://іd.example.org/device"},
        {"verification_uri_complete": "http://id.example.org/device?user_code=WDJB-MJHT"},
        {"user_code": "\x1b[2J\x1b[HWDJB"},
        {"user_code": "WDJB\u202eTHJM"},
        {"user_code": "W" * 200},
        {"user_code": ""},
    ],
    ids=[
        "clear-page",
        "not-web",
        "escape-in-page",
        "non-ascii-page",
        "clear-complete",
        "escape-in-code",
        "bidi-in-code",
        "long-code",
        "empty-code",
    ],
)
def test_nothing_unfit_to_show_is_shown(
    server: FakeTokenServer, changes: dict[str, object]
) -> None:
    _serve(server, _device_answer(**changes))
    code, shown = _refused(server)
    assert code == 72007
    assert shown == []
    assert len(server.requests) == 1


def test_a_page_on_loopback_may_be_plain_http(server: FakeTokenServer) -> None:
    _serve(server, _device_answer(verification_uri="http://127.0.0.1:8080/device"))
    (prompt,) = _run(server)
    assert prompt.verification_uri == "http://127.0.0.1:8080/device"


def test_a_few_server_errors_while_waiting_are_waited_past(server: FakeTokenServer) -> None:
    unavailable = (503, b"busy")
    pending = (400, json.dumps({"error": "authorization_pending"}).encode())
    granted = token_answer("access", refresh_token="refresh")
    _serve(server, _device_answer(interval=2), unavailable, unavailable, pending, granted)
    sleeps: list[float] = []
    _run(server, sleeps)
    # The wait doubles after each failure in a row (RFC 8628 section 3.5), then returns
    # to the server's interval.
    assert sleeps == [2.0, 4.0, 8.0, 2.0]
    assert len(server.requests) == 5


def test_a_token_endpoint_that_keeps_failing_ends_the_wait(server: FakeTokenServer) -> None:
    _serve(server, _device_answer(interval=1), (502, b"bad gateway"))
    code, shown = _refused(server)
    assert code == 72007
    assert len(shown) == 1
    assert len(server.requests) == 1 + 4


@pytest.mark.parametrize(
    ("error", "code"),
    [
        ("access_denied", 11016),
        ("authorization_declined", 11016),
        ("expired_token", 11017),
        ("bad_verification_code", 11017),
        ("invalid_client", 72008),
    ],
)
def test_how_the_wait_for_a_device_code_ends(
    server: FakeTokenServer, error: str, code: int
) -> None:
    # Microsoft's device flow answers `authorization_declined` and `bad_verification_code`
    # where RFC 8628 names `access_denied` and `expired_token`.
    _serve(server, _device_answer(interval=1), (400, json.dumps({"error": error}).encode()))
    assert _refused(server)[0] == code
