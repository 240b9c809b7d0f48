"""The access-token cache: refreshing before expiry, once per account across threads, once
after a refusal, remembering a refused grant, keeping a rotated refresh token, and saying
whether the refresh token's file holds the token in use."""

from __future__ import annotations

import errno
import json
import os
import stat
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import structlog

import log_audit
from mailfathom.adapters.oauth import tokens as tokens_module
from mailfathom.adapters.oauth.endpoint import TokenEndpoint
from mailfathom.adapters.oauth.tokens import (
    WRITE_AGAIN_SECONDS,
    AccessTokens,
    replace_secret_file,
)
from mailfathom.domain.config import SecretRef
from mailfathom.domain.errors import ConsentRequired, SyncError, TokenRefused
from mailfathom.domain.oauth import OAuthCredential, OAuthProvider
from oauth.fake_token_server import Answer, FakeTokenServer, error_answer, fake_token_server
from waiting import wait_for

GRANTED = "refresh-granted-value-1"
ROTATED = "refresh-rotated-value-2"
REGRANTED = "refresh-regranted-value-3"
log_audit.register(GRANTED, ROTATED, REGRANTED)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Issuer:
    """Answers refreshes with numbered access tokens of a given lifetime."""

    def __init__(self, lifetime: float = 300, rotate_to: str | None = None) -> None:
        self.lifetime = lifetime
        self.rotate_to = rotate_to
        self.issued = 0
        self.refused: set[str] = set()

    def __call__(self, form: dict[str, str]) -> Answer:
        if form.get("refresh_token") in self.refused:
            return error_answer("invalid_grant")
        self.issued += 1
        access = f"access-number-{self.issued:04d}"
        log_audit.register(access)
        body: dict[str, object] = {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": self.lifetime,
        }
        if self.rotate_to is not None:
            body["refresh_token"] = self.rotate_to
        return 200, json.dumps(body).encode()


@pytest.fixture
def server() -> Iterator[FakeTokenServer]:
    with fake_token_server() as running:
        yield running


@pytest.fixture
def endpoint() -> Iterator[TokenEndpoint]:
    client = TokenEndpoint(timeout_seconds=10)
    yield client
    client.close()


def credential(server: FakeTokenServer, ref: SecretRef, margin: float = 60) -> OAuthCredential:
    return OAuthCredential(
        provider=OAuthProvider.GENERIC,
        client_id="mf",
        refresh_token=ref,
        token_endpoint=server.url,
        scopes=("mail",),
        refresh_margin_seconds=margin,
    )


def secret_file(tmp_path: Path, value: str = GRANTED) -> SecretRef:
    path = tmp_path / "work.refresh"
    path.write_text(value + "\n")
    path.chmod(0o600)
    return SecretRef(file=path, origin="Accounts[0].OAuth.RefreshToken")


def test_a_token_is_kept_until_the_margin_before_its_expiry(
    server: FakeTokenServer, endpoint: TokenEndpoint, tmp_path: Path
) -> None:
    server.responder = issuer = Issuer(lifetime=300)
    clock = Clock()
    tokens = AccessTokens(endpoint, clock=clock)
    login = credential(server, secret_file(tmp_path), margin=60)
    first = tokens.current("work", login)
    clock.now += 239
    assert tokens.current("work", login) == first
    clock.now += 1
    second = tokens.current("work", login)
    assert second != first
    assert issuer.issued == 2
    assert [r["refresh_token"] for r in server.requests] == [GRANTED, GRANTED]


def test_a_margin_longer_than_the_lifetime_still_reuses_the_token(
    server: FakeTokenServer, endpoint: TokenEndpoint, tmp_path: Path
) -> None:
    server.responder = issuer = Issuer(lifetime=4)
    clock = Clock()
    tokens = AccessTokens(endpoint, clock=clock)
    login = credential(server, secret_file(tmp_path), margin=60)
    first = tokens.current("work", login)
    clock.now += 1.9
    assert tokens.current("work", login) == first
    clock.now += 0.1
    assert tokens.current("work", login) != first
    assert issuer.issued == 2


def test_threads_of_one_account_share_one_refresh(
    server: FakeTokenServer, endpoint: TokenEndpoint, tmp_path: Path
) -> None:
    server.responder = issuer = Issuer()
    tokens = AccessTokens(endpoint)
    login = credential(server, secret_file(tmp_path))
    server.gate.clear()
    got: list[str] = []
    threads = [
        threading.Thread(target=lambda: got.append(tokens.current("work", login))) for _ in range(6)
    ]
    for thread in threads:
        thread.start()
    wait_for(lambda: len(server.requests) == 1, "the first refresh to arrive")
    server.gate.set()
    for thread in threads:
        thread.join(10)
    assert len(got) == 6
    assert set(got) == {"access-number-0001"}
    assert issuer.issued == 1


def test_after_a_refusal_one_refresh_serves_every_connection_that_was_refused(
    server: FakeTokenServer, endpoint: TokenEndpoint, tmp_path: Path
) -> None:
    server.responder = issuer = Issuer()
    tokens = AccessTokens(endpoint)
    login = credential(server, secret_file(tmp_path))
    refused = tokens.current("work", login)
    replacement = tokens.after_refusal("work", login, refused)
    assert replacement != refused
    # A second connection refused with the same old token takes the new one.
    assert tokens.after_refusal("work", login, refused) == replacement
    assert tokens.current("work", login) == replacement
    assert issuer.issued == 2


def test_a_refused_grant_is_remembered_until_the_secret_changes(
    server: FakeTokenServer, endpoint: TokenEndpoint, tmp_path: Path
) -> None:
    server.responder = issuer = Issuer()
    issuer.refused.add(GRANTED)
    tokens = AccessTokens(endpoint)
    ref = secret_file(tmp_path)
    login = credential(server, ref)
    for _ in range(3):
        with pytest.raises(ConsentRequired) as caught:
            tokens.current("work", login)
        assert caught.value.code == 31003
        assert GRANTED not in str(caught.value)
    with pytest.raises(ConsentRequired):
        tokens.after_refusal("work", login, "whatever")
    assert len(server.requests) == 1
    assert tokens.consent_pending("work", login)
    assert ref.file is not None
    ref.file.write_text(REGRANTED)
    assert not tokens.consent_pending("work", login)
    assert tokens.current("work", login) == "access-number-0001"
    assert [r["refresh_token"] for r in server.requests] == [GRANTED, REGRANTED]


@pytest.mark.parametrize(
    ("error", "consent"),
    [
        ("invalid_grant", True),
        ("invalid_client", True),
        ("unauthorized_client", True),
        ("invalid_scope", True),
        ("interaction_required", True),
        ("consent_required", True),
        ("login_required", True),
        ("invalid_request", False),
        ("temporarily_unavailable", False),
    ],
)
def test_which_refusals_need_a_new_grant(
    server: FakeTokenServer, endpoint: TokenEndpoint, tmp_path: Path, error: str, consent: bool
) -> None:
    server.responder = lambda form: error_answer(error)
    tokens = AccessTokens(endpoint)
    login = credential(server, secret_file(tmp_path))
    expected: type[SyncError] = ConsentRequired if consent else TokenRefused
    for _ in range(2):
        with pytest.raises(expected):
            tokens.current("work", login)
    assert len(server.requests) == (1 if consent else 2)


def test_a_rotated_refresh_token_replaces_the_file_unreadable_by_others(
    server: FakeTokenServer, endpoint: TokenEndpoint, tmp_path: Path
) -> None:
    server.responder = Issuer(lifetime=1, rotate_to=ROTATED)
    clock = Clock()
    tokens = AccessTokens(endpoint, clock=clock)
    ref = secret_file(tmp_path)
    assert ref.file is not None
    ref.file.chmod(0o644)
    login = credential(server, ref)
    tokens.current("work", login)
    assert ref.file.read_text() == ROTATED + "\n"
    assert stat.S_IMODE(ref.file.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["work.refresh"]
    clock.now += 5
    tokens.current("work", login)
    assert [r["refresh_token"] for r in server.requests] == [GRANTED, ROTATED]


def test_a_rotated_token_from_an_environment_variable_is_kept_in_memory_and_said(
    server: FakeTokenServer,
    endpoint: TokenEndpoint,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server.responder = Issuer(lifetime=1, rotate_to=ROTATED)
    monkeypatch.setenv("WORK_REFRESH", GRANTED)
    clock = Clock()
    tokens = AccessTokens(endpoint, clock=clock)
    login = credential(
        server, SecretRef(env="WORK_REFRESH", origin="Accounts[0].OAuth.RefreshToken")
    )
    with structlog.testing.capture_logs() as events:
        tokens.current("work", login)
    kept = [e for e in events if e["event"] == "oauth.refresh_token_kept_in_memory"]
    assert kept == [
        {
            "event": "oauth.refresh_token_kept_in_memory",
            "log_level": "warning",
            "account": "work",
            "key": "Accounts[0].OAuth.RefreshToken.Env",
        }
    ]
    assert os.environ["WORK_REFRESH"] == GRANTED
    clock.now += 5
    tokens.current("work", login)
    assert [r["refresh_token"] for r in server.requests] == [GRANTED, ROTATED]
    # An operator who sets a new grant is heard over the kept token.
    monkeypatch.setenv("WORK_REFRESH", REGRANTED)
    clock.now += 5
    tokens.current("work", login)
    assert server.requests[-1]["refresh_token"] == REGRANTED


def test_a_rotated_token_the_file_would_not_take_is_written_again_soon(
    server: FakeTokenServer,
    endpoint: TokenEndpoint,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A rotated refresh token that could not be written back (a full disk, a file system
    mounted read-only for a while) is written again `WRITE_AGAIN_SECONDS` later by the next
    connection, not only at the next refresh, so a restart in between does not present the
    used one."""
    server.responder = issuer = Issuer(lifetime=3600, rotate_to=ROTATED)
    writes: list[str] = []
    real_write = tokens_module.replace_secret_file

    def failing(path: Path, value: str) -> None:
        writes.append(value)
        if len(writes) < 3:
            raise OSError(errno.EROFS, "Read-only file system")
        real_write(path, value)

    monkeypatch.setattr(tokens_module, "replace_secret_file", failing)
    ref = secret_file(tmp_path)
    assert ref.file is not None
    clock = Clock()
    tokens = AccessTokens(endpoint, clock=clock)
    login = credential(server, ref)
    with structlog.testing.capture_logs() as events:
        first = tokens.current("work", login)
    assert [e["event"] for e in events if e["event"].startswith("oauth.refresh_token")] == [
        "oauth.refresh_token_not_written"
    ]
    assert writes == [ROTATED]
    assert ref.file.read_text() == GRANTED + "\n"
    clock.now += WRITE_AGAIN_SECONDS - 1
    assert tokens.current("work", login) == first
    assert writes == [ROTATED]
    clock.now += 1
    assert tokens.current("work", login) == first  # tried again, and refused again
    assert writes == [ROTATED, ROTATED]
    clock.now += WRITE_AGAIN_SECONDS
    with structlog.testing.capture_logs() as events:
        assert tokens.current("work", login) == first
    assert writes == [ROTATED, ROTATED, ROTATED]
    assert ref.file.read_text() == ROTATED + "\n"
    assert [e["event"] for e in events if e["event"].startswith("oauth.refresh_token")] == [
        "oauth.refresh_token_rotated"
    ]
    # Written: nothing more to write, and the next refresh presents the written token.
    clock.now += WRITE_AGAIN_SECONDS
    tokens.current("work", login)
    assert len(writes) == 3
    assert issuer.issued == 1
    assert [r["refresh_token"] for r in server.requests] == [GRANTED]


def test_a_file_unreadable_when_written_again_leaves_the_held_token_in_use(
    server: FakeTokenServer,
    endpoint: TokenEndpoint,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server.responder = Issuer(lifetime=3600, rotate_to=ROTATED)

    def refusing(path: Path, value: str) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(tokens_module, "replace_secret_file", refusing)
    ref = secret_file(tmp_path)
    assert ref.file is not None
    clock = Clock()
    tokens = AccessTokens(endpoint, clock=clock)
    login = credential(server, ref)
    first = tokens.current("work", login)
    ref.file.unlink()
    clock.now += WRITE_AGAIN_SECONDS
    with structlog.testing.capture_logs() as events:
        assert tokens.current("work", login) == first
    assert [e.get("error") for e in events if e["event"] == "oauth.refresh_token_not_written"] == [
        "SecretUnavailable"
    ]


class Saying:
    """What the access tokens said of each account's refresh token file, in order."""

    def __init__(self) -> None:
        self.said: list[str] = []

    def token_unsaved(self, account_id: str) -> None:
        self.said.append(f"{account_id} unsaved")

    def token_saved(self, account_id: str) -> None:
        self.said.append(f"{account_id} saved")


@dataclass
class Unwritable:
    """An account whose provider rotates its refresh token, and whose file takes none."""

    tokens: AccessTokens
    login: OAuthCredential
    clock: Clock
    path: Path
    saying: Saying = field(default_factory=Saying)

    def current(self) -> str:
        return self.tokens.current("work", self.login, self.saying)


def _refusing(path: Path, value: str) -> None:
    raise OSError(errno.EROFS, "Read-only file system")


@pytest.fixture
def unwritable(
    server: FakeTokenServer,
    endpoint: TokenEndpoint,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Unwritable:
    server.responder = Issuer(lifetime=3600, rotate_to=ROTATED)
    monkeypatch.setattr(tokens_module, "replace_secret_file", _refusing)
    ref = secret_file(tmp_path)
    assert ref.file is not None
    clock = Clock()
    return Unwritable(AccessTokens(endpoint, clock=clock), credential(server, ref), clock, ref.file)


def test_a_rotated_token_not_written_is_said_until_the_file_takes_it(
    unwritable: Unwritable, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = unwritable.current()
    assert unwritable.saying.said == ["work unsaved"]
    # Each failed write is said again (another process may have cleared it meanwhile).
    unwritable.clock.now += WRITE_AGAIN_SECONDS
    assert unwritable.current() == first
    assert unwritable.saying.said == ["work unsaved", "work unsaved"]
    # Nothing new while the write waits: nothing said.
    assert unwritable.current() == first
    assert len(unwritable.saying.said) == 2
    monkeypatch.setattr(tokens_module, "replace_secret_file", replace_secret_file)
    unwritable.clock.now += WRITE_AGAIN_SECONDS
    unwritable.current()
    assert unwritable.path.read_text() == ROTATED + "\n"
    assert unwritable.saying.said == ["work unsaved", "work unsaved", "work saved"]
    unwritable.clock.now += WRITE_AGAIN_SECONDS
    unwritable.current()
    assert len(unwritable.saying.said) == 3


@pytest.mark.parametrize("written", [REGRANTED, ROTATED], ids=["a-new-grant", "the-kept-token"])
def test_a_file_found_holding_another_token_than_the_replaced_one_is_said_to_hold_it(
    unwritable: Unwritable, written: str
) -> None:
    """Someone wrote the file meanwhile (the person's new grant, or another process the
    token kept here): the kept token is dropped, and nothing is left unsaved."""
    unwritable.current()
    unwritable.path.write_text(written + "\n")
    unwritable.clock.now += WRITE_AGAIN_SECONDS
    unwritable.current()
    assert unwritable.saying.said == ["work unsaved", "work saved"]
    assert unwritable.path.read_text() == written + "\n"


def test_what_nobody_was_told_is_said_to_the_next_connection_that_reports(
    unwritable: Unwritable,
) -> None:
    unwritable.tokens.current("work", unwritable.login)  # a connection that reports nowhere
    assert unwritable.saying.said == []
    unwritable.current()
    assert unwritable.saying.said == ["work unsaved"]


def test_a_refresh_with_the_files_own_token_says_the_file_holds_it(
    server: FakeTokenServer, endpoint: TokenEndpoint, tmp_path: Path
) -> None:
    """A process started after a warning was recorded (by one that has ended) finds the
    file's token accepted and nothing to write: the warning is over."""
    server.responder = Issuer(lifetime=1)
    clock = Clock()
    tokens = AccessTokens(endpoint, clock=clock)
    login = credential(server, secret_file(tmp_path))
    saying = Saying()
    tokens.current("work", login, saying)
    assert saying.said == ["work saved"]


def test_a_token_in_a_variable_is_never_said_unsaved(
    server: FakeTokenServer, endpoint: TokenEndpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A variable cannot be written: what is kept in memory is said once by an event (above),
    and is no file to mend."""
    server.responder = Issuer(lifetime=1, rotate_to=ROTATED)
    monkeypatch.setenv("WORK_REFRESH", GRANTED)
    clock = Clock()
    tokens = AccessTokens(endpoint, clock=clock)
    login = credential(
        server, SecretRef(env="WORK_REFRESH", origin="Accounts[0].OAuth.RefreshToken")
    )
    saying = Saying()
    tokens.current("work", login, saying)
    clock.now += 5
    tokens.current("work", login, saying)
    assert len(server.requests) == 2
    assert saying.said == []


def test_a_grant_written_during_a_refresh_is_not_overwritten_by_its_rotation(
    server: FakeTokenServer, endpoint: TokenEndpoint, tmp_path: Path
) -> None:
    ref = secret_file(tmp_path)
    assert ref.file is not None
    path = ref.file
    issuer = Issuer(rotate_to=ROTATED)

    def regrant_then_answer(form: dict[str, str]) -> Answer:
        path.write_text(REGRANTED)
        return issuer(form)

    server.responder = regrant_then_answer
    AccessTokens(endpoint).current("work", credential(server, ref))
    assert path.read_text() == REGRANTED


def test_a_mended_client_secret_is_tried_without_a_new_grant(
    server: FakeTokenServer, endpoint: TokenEndpoint, tmp_path: Path
) -> None:
    secret_path = tmp_path / "client.secret"
    secret_path.write_text("client-secret-wrong")
    issuer = Issuer()

    def check_client(form: dict[str, str]) -> Answer:
        if form.get("client_secret") != "client-secret-right":
            return error_answer("invalid_client", 401)
        return issuer(form)

    server.responder = check_client
    tokens = AccessTokens(endpoint)
    login = OAuthCredential(
        provider=OAuthProvider.GENERIC,
        client_id="mf",
        refresh_token=secret_file(tmp_path),
        client_secret=SecretRef(file=secret_path, origin="Accounts[0].OAuth.ClientSecret"),
        token_endpoint=server.url,
        scopes=("mail",),
    )
    for _ in range(2):
        with pytest.raises(ConsentRequired):
            tokens.current("work", login)
    assert len(server.requests) == 1
    assert tokens.consent_pending("work", login)
    secret_path.write_text("client-secret-right")
    assert not tokens.consent_pending("work", login)
    assert tokens.current("work", login) == "access-number-0001"
    assert len(server.requests) == 2


@pytest.mark.parametrize(
    ("provider", "warned"), [(OAuthProvider.GENERIC, True), (OAuthProvider.GMAIL, False)]
)
def test_a_generic_refresh_token_in_a_variable_is_warned_about_once(
    server: FakeTokenServer,
    endpoint: TokenEndpoint,
    monkeypatch: pytest.MonkeyPatch,
    provider: OAuthProvider,
    warned: bool,
) -> None:
    # A server that revokes a used refresh token would revoke the whole grant when a second
    # process, or this one after a restart, presents the variable's value again.
    server.responder = Issuer(lifetime=1)
    monkeypatch.setenv("WORK_REFRESH", GRANTED)
    clock = Clock()
    tokens = AccessTokens(endpoint, clock=clock)
    login = OAuthCredential(
        provider=provider,
        client_id="mf",
        refresh_token=SecretRef(env="WORK_REFRESH", origin="Accounts[0].OAuth.RefreshToken"),
        token_endpoint=server.url,
        scopes=("mail",),
    )
    with structlog.testing.capture_logs() as events:
        tokens.current("work", login)
        clock.now += 5
        tokens.current("work", login)
    said = [e for e in events if e["event"] == "oauth.refresh_token_in_environment"]
    expected = {
        "event": "oauth.refresh_token_in_environment",
        "log_level": "warning",
        "account": "work",
        "key": "Accounts[0].OAuth.RefreshToken.Env",
    }
    assert said == ([expected] if warned else [])
