"""`mailfathom init --provider`, run as a script runs it (no terminal, `CI=true`): the
person's grant played by the test against the real authorization server, the IMAP login
checked on a Dovecot that validates the token by introspection."""

from __future__ import annotations

import stat
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from log_audit import register_all
from mailfathom.adapters.config import load_config
from mailfathom.domain.oauth import ConnectionAuth, OAuthProvider
from servers.dovecot import ImapAccount
from servers.oauth import OAuthServer

from .init_runs import SCOPES, CommandRun, Finished, generic_flags, init_run


def _one_coded_line(done: Finished, code: int) -> None:
    assert done.returncode == 2, done.stdout + done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("MailFathom error")]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"MailFathom error {code}:"), done.stderr
    assert "Traceback" not in done.stderr


def _started_in_an_empty_directory(
    server: OAuthServer, client_id: str, account: ImapAccount, tmp_path: Path
) -> tuple[Path, Path, CommandRun]:
    root = tmp_path / "deployment"
    root.mkdir()
    config = root / "mailfathom.toml"
    return root, config, init_run(root, generic_flags(server, client_id, account, config))


def _nothing_written(root: Path) -> None:
    assert sorted(p.name for p in root.iterdir()) == []


def test_a_device_grant_ends_in_a_configuration_with_the_token_kept_apart(
    oauth_server: OAuthServer, oauth_imap_account: ImapAccount, client_id: str, tmp_path: Path
) -> None:
    config = tmp_path / "mailfathom.toml"
    run = init_run(tmp_path, generic_flags(oauth_server, client_id, oauth_imap_account, config))
    oauth_server.approve_device(run.user_code(), oauth_imap_account.username)
    done = run.finish()
    assert done.returncode == 0, done.stdout + done.stderr
    token_file = tmp_path / "secrets" / "mail.refresh"
    refresh_token = token_file.read_text("utf-8").strip()
    register_all([refresh_token])
    assert refresh_token
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(token_file.parent.stat().st_mode) == 0o700
    assert refresh_token not in done.stdout + done.stderr + config.read_text("utf-8")
    (account,) = load_config(config).accounts
    assert account.imap is not None
    assert account.imap.auth is ConnectionAuth.OAUTH2
    assert account.imap.secret is None
    oauth = account.oauth
    assert oauth is not None
    assert oauth.provider is OAuthProvider.GENERIC
    assert oauth.client_id == client_id
    assert oauth.scopes == SCOPES
    assert oauth.refresh_token.file == token_file
    assert oauth.token_endpoint == oauth_server.token_endpoint
    assert oauth.device_authorization_endpoint == oauth_server.device_authorization_endpoint
    assert oauth.authorization_endpoint == oauth_server.authorization_endpoint
    assert oauth.revocation_endpoint == oauth_server.revocation_endpoint
    assert f"{oauth_server.issuer}/device" in done.stdout


def test_a_loopback_grant_with_pkce_plays_the_browser(
    oauth_server: OAuthServer, oauth_imap_account: ImapAccount, client_id: str, tmp_path: Path
) -> None:
    config = tmp_path / "mailfathom.toml"
    token_file = tmp_path / "elsewhere" / "work.token"
    oauth_server.approve_authorizations_as(oauth_imap_account.username)
    try:
        run = init_run(
            tmp_path,
            [
                *generic_flags(oauth_server, client_id, oauth_imap_account, config),
                "--flow", "loopback", "--refresh-token-file", str(token_file),
            ],
        )  # fmt: skip
        url = run.authorization_url(oauth_server.authorization_endpoint)
        with httpx2.Client(follow_redirects=True, timeout=30) as browser:
            assert browser.get(url).status_code == 200
        done = run.finish()
    finally:
        oauth_server.approve_authorizations_as(None)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "code_challenge_method=S256" in url
    refresh_token = token_file.read_text("utf-8").strip()
    register_all([refresh_token])
    assert refresh_token not in done.stdout + done.stderr
    oauth = load_config(config).accounts[0].oauth
    assert oauth is not None
    assert oauth.refresh_token.file == token_file


def test_a_declined_device_code_writes_nothing(
    oauth_server: OAuthServer, oauth_imap_account: ImapAccount, client_id: str, tmp_path: Path
) -> None:
    root, _, run = _started_in_an_empty_directory(
        oauth_server, client_id, oauth_imap_account, tmp_path
    )
    oauth_server.deny_device(run.user_code())
    done = run.finish()
    _one_coded_line(done, 11016)
    _nothing_written(root)


@pytest.fixture
def short_device_codes(oauth_server: OAuthServer) -> Iterator[OAuthServer]:
    oauth_server.set_device_code_lifetime(2)
    try:
        yield oauth_server
    finally:
        oauth_server.set_device_code_lifetime(600)


def test_an_expired_device_code_writes_nothing(
    short_device_codes: OAuthServer,
    oauth_imap_account: ImapAccount,
    client_id: str,
    tmp_path: Path,
) -> None:
    root, _, run = _started_in_an_empty_directory(
        short_device_codes, client_id, oauth_imap_account, tmp_path
    )
    run.user_code()
    done = run.finish()
    _one_coded_line(done, 11017)
    _nothing_written(root)


def test_gmail_is_refused_the_device_flow_before_anything_is_asked(tmp_path: Path) -> None:
    run = init_run(
        tmp_path,
        [
            "--non-interactive", "--config", str(tmp_path / "mailfathom.toml"),
            "--provider", "gmail", "--flow", "device", "--imap-user", "someone@gmail.com",
            "--client-id", "1234-example.apps.googleusercontent.com",
            "--client-secret-env", "MF_TEST_GOOGLE_SECRET",
        ],
        env={"MF_TEST_GOOGLE_SECRET": "not-a-real-secret"},
    )  # fmt: skip
    _one_coded_line(run.finish(), 72009)
    _nothing_written(tmp_path)


def test_a_password_flag_is_refused_with_a_provider(tmp_path: Path) -> None:
    run = init_run(
        tmp_path,
        [
            "--non-interactive", "--config", str(tmp_path / "mailfathom.toml"),
            "--provider", "microsoft", "--imap-user", "someone@example.org",
            "--client-id", "00000000-1111-2222-3333-444444444444",
            "--imap-secret-env", "MF_SOME_PASSWORD",
        ],
    )  # fmt: skip
    _one_coded_line(run.finish(), 11006)


def test_an_existing_token_file_is_left_and_nothing_is_asked(
    oauth_server: OAuthServer, oauth_imap_account: ImapAccount, client_id: str, tmp_path: Path
) -> None:
    config = tmp_path / "mailfathom.toml"
    kept = tmp_path / "secrets" / "mail.refresh"
    kept.parent.mkdir()
    kept.write_text("someone else's\n", "utf-8")
    before = oauth_server.counts().get("device_authorization", 0)
    run = init_run(tmp_path, generic_flags(oauth_server, client_id, oauth_imap_account, config))
    _one_coded_line(run.finish(), 11004)
    assert kept.read_text("utf-8") == "someone else's\n"
    assert not config.exists()
    assert oauth_server.counts().get("device_authorization", 0) == before


def test_a_refused_imap_login_removes_the_token_again(
    oauth_server: OAuthServer, oauth_imap_account: ImapAccount, client_id: str, tmp_path: Path
) -> None:
    # The person approves as somebody the mail server does not know: the grant is good but
    # the login is refused, and nothing of it is left.
    root, config, run = _started_in_an_empty_directory(
        oauth_server, client_id, oauth_imap_account, tmp_path
    )
    oauth_server.approve_device(run.user_code(), f"stranger-{uuid.uuid4().hex[:6]}")
    done = run.finish()
    _one_coded_line(done, 31002)
    assert not config.exists()
    # The token's file is removed, and so is the directory made for it.
    _nothing_written(root)


def test_an_issuer_whose_metadata_names_another_is_refused(
    oauth_imap_account: ImapAccount, tmp_path: Path
) -> None:
    from .metadata_host import metadata, metadata_host

    with metadata_host() as host:
        host.publish("/.well-known/oauth-authorization-server", metadata("https://other.example"))
        fake = OAuthServer.__new__(OAuthServer)
        fake.port = int(host.base.rsplit(":", 1)[1])
        run = init_run(
            tmp_path,
            generic_flags(fake, "mailfathom", oauth_imap_account, tmp_path / "mailfathom.toml"),
        )
        _one_coded_line(run.finish(), 72006)
    _nothing_written(tmp_path)
