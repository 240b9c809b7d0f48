"""`mfctl account consent`: an account whose refresh token the provider no longer accepts
is granted access again by the person, and is no longer held back."""

from __future__ import annotations

import socket
import stat
import uuid
from datetime import UTC, datetime
from pathlib import Path

import httpx2
import pytest

from log_audit import register_all
from mailfathom.adapters.config import load_config
from mailfathom.adapters.sql.account_health import SqlAccountHealth
from mailfathom.bootstrap import Services
from servers.dovecot import ImapAccount
from servers.oauth import OAuthServer, device_grant
from servers.smtp import SmtpServer

from .init_runs import SCOPES, CommandRun, Finished, init_by_device


def _command(root: Path, *args: str) -> Finished:
    return CommandRun(root, list(args)).finish()


def _coded(done: Finished, code: int) -> None:
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"MailFathom error {code}:" in done.stderr


def test_a_revoked_grant_is_granted_again_and_the_account_is_released(
    oauth_server: OAuthServer, oauth_imap_account: ImapAccount, client_id: str, tmp_path: Path
) -> None:
    config, _ = init_by_device(oauth_server, client_id, oauth_imap_account, tmp_path)
    token_file = tmp_path / "secrets" / "mail.refresh"
    first = token_file.read_text("utf-8").strip()
    oauth_server.revoke_refresh_tokens(oauth_imap_account.username)
    _coded(_command(tmp_path, "sync", "--config", str(config)), 31003)
    # The one-shot run wrote the account's health down, as a continuous one does.
    held = _command(tmp_path, "accounts", "--config", str(config))
    _coded(held, 31003)
    assert "mail: needs consent (31003) since" in held.stdout

    run = CommandRun(tmp_path, ["account", "consent", "--config", str(config), "--account", "mail"])
    revoked = oauth_server.counts().get("revocation", 0)
    oauth_server.approve_device(run.user_code(), oauth_imap_account.username)
    done = run.finish()
    assert done.returncode == 0, done.stdout + done.stderr
    # The grant kept is never withdrawn.
    assert oauth_server.counts().get("revocation", 0) == revoked
    second = token_file.read_text("utf-8").strip()
    register_all([first, second])
    assert second != first
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    assert second not in done.stdout + done.stderr

    listed = _command(tmp_path, "accounts", "--config", str(config))
    assert listed.returncode == 0, listed.stdout + listed.stderr
    synced = _command(tmp_path, "sync", "--config", str(config))
    assert synced.returncode == 0, synced.stdout + synced.stderr
    for output in (listed, synced):
        assert second not in output.stdout + output.stderr


def test_a_new_grant_ends_the_warning_of_a_refresh_token_not_saved(
    oauth_server: OAuthServer, oauth_imap_account: ImapAccount, client_id: str, tmp_path: Path
) -> None:
    """A process (since ended) could not write a rotated refresh token; the person grants
    access again, and the file holds the token to use: the warning is over."""
    config, _ = init_by_device(oauth_server, client_id, oauth_imap_account, tmp_path)
    with Services.open(load_config(config)) as services:
        SqlAccountHealth(services.engine).refresh_token_unsaved("mail", datetime.now(UTC))
    warned = _command(tmp_path, "accounts", "--config", str(config))
    assert warned.returncode == 0, warned.stdout + warned.stderr
    assert "mail: refresh token not saved (31009) since" in warned.stdout
    assert "MailFathom warning 31009:" in warned.stderr

    run = CommandRun(tmp_path, ["account", "consent", "--config", str(config), "--account", "mail"])
    oauth_server.approve_device(run.user_code(), oauth_imap_account.username)
    done = run.finish()
    assert done.returncode == 0, done.stdout + done.stderr
    register_all([(tmp_path / "secrets" / "mail.refresh").read_text("utf-8").strip()])
    with Services.open(load_config(config)) as services:
        assert services.account_warnings() == []
    listed = _command(tmp_path, "accounts", "--config", str(config))
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert "31009" not in listed.stdout + listed.stderr


def test_an_account_without_oauth_cannot_be_granted_again(tmp_path: Path) -> None:
    config = tmp_path / "mailfathom.toml"
    config.write_text(
        '[Store]\nDataDir = "data"\n\n[[Accounts]]\nId = "notes"\nDisplayName = "Notes"\n'
        'Kind = "local"\n',
        "utf-8",
    )
    done = _command(tmp_path, "account", "consent", "--config", str(config), "--account", "notes")
    _coded(done, 11020)


def test_a_token_kept_in_a_variable_is_handed_over_in_a_file(
    oauth_server: OAuthServer, oauth_imap_account: ImapAccount, client_id: str, tmp_path: Path
) -> None:
    variable = "MF_TEST_MAIL_REFRESH_TOKEN"
    config, initialized = init_by_device(
        oauth_server, client_id, oauth_imap_account, tmp_path, "--refresh-token-env", variable
    )
    oauth = load_config(config).accounts[0].oauth
    assert oauth is not None
    assert oauth.refresh_token.env == variable
    handed = tmp_path / "secrets" / "mail.refresh"
    first = handed.read_text("utf-8").strip()
    register_all([first])
    assert str(handed) in initialized.stdout
    assert variable in initialized.stdout
    assert first not in initialized.stdout + initialized.stderr

    # The operator moves the token into the variable, as init said.
    handed.unlink()
    synced = CommandRun(tmp_path, ["sync", "--config", str(config)], {variable: first}).finish()
    assert synced.returncode == 0, synced.stdout + synced.stderr

    run = CommandRun(
        tmp_path,
        ["account", "consent", "--config", str(config), "--account", "mail"],
        {variable: first},
    )
    oauth_server.approve_device(run.user_code(), oauth_imap_account.username)
    done = run.finish()
    assert done.returncode == 0, done.stdout + done.stderr
    second = handed.read_text("utf-8").strip()
    register_all([second])
    assert second != first
    assert stat.S_IMODE(handed.stat().st_mode) == 0o600
    assert str(handed) in done.stdout
    assert variable in done.stdout
    assert second not in done.stdout + done.stderr


def test_a_grant_for_another_person_leaves_the_working_one_in_place(
    oauth_server: OAuthServer, oauth_imap_account: ImapAccount, client_id: str, tmp_path: Path
) -> None:
    # The person picks another of their accounts at the provider: the new grant is good, but
    # the mail server does not take it for this mailbox. The grant that works stays.
    config, _ = init_by_device(oauth_server, client_id, oauth_imap_account, tmp_path)
    token_file = tmp_path / "secrets" / "mail.refresh"
    working = token_file.read_text("utf-8")
    register_all([working.strip()])

    run = CommandRun(tmp_path, ["account", "consent", "--config", str(config), "--account", "mail"])
    revoked = oauth_server.counts().get("revocation", 0)
    oauth_server.approve_device(run.user_code(), f"someone-else-{oauth_imap_account.username}")
    done = run.finish()
    _coded(done, 31002)
    # The other person's grant is withdrawn at the provider rather than left working.
    assert oauth_server.counts().get("revocation", 0) == revoked + 1
    assert "The access just granted was withdrawn at the provider." in done.stdout
    assert token_file.read_text("utf-8") == working
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    assert sorted(p.name for p in token_file.parent.iterdir()) == [token_file.name]
    synced = _command(tmp_path, "sync", "--config", str(config))
    assert synced.returncode == 0, synced.stdout + synced.stderr


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def test_a_trial_that_cannot_reach_the_server_leaves_the_authorization_working(
    oauth_server: OAuthServer, oauth_imap_account: ImapAccount, tmp_path: Path
) -> None:
    # At Google withdrawing any token of an authorization ends all of it: the grant just
    # given as the account's own user shares it with the token the account runs on. A trial
    # that learnt nothing about who signed in withdraws nothing.
    client_id = f"whole-{uuid.uuid4().hex[:8]}"
    oauth_server.add_client(client_id, redirect_uris=["http://127.0.0.1"], whole_authorization=True)
    config, _ = init_by_device(oauth_server, client_id, oauth_imap_account, tmp_path)
    token_file = tmp_path / "secrets" / "mail.refresh"
    working = token_file.read_text("utf-8")
    register_all([working.strip()])
    text = config.read_text("utf-8")
    config.write_text(text.replace(f"Port = {oauth_imap_account.port}", f"Port = {_closed_port()}"))

    run = CommandRun(tmp_path, ["account", "consent", "--config", str(config), "--account", "mail"])
    revoked = oauth_server.counts().get("revocation", 0)
    oauth_server.approve_device(run.user_code(), oauth_imap_account.username)
    done = run.finish()
    assert done.returncode == 2, done.stdout + done.stderr
    assert oauth_server.counts().get("revocation", 0) == revoked
    assert "was not withdrawn at the provider (11046)" in done.stdout
    assert token_file.read_text("utf-8") == working
    assert sorted(p.name for p in token_file.parent.iterdir()) == [token_file.name]
    refreshed = httpx2.post(
        oauth_server.token_endpoint,
        data={
            "grant_type": "refresh_token",
            "refresh_token": working.strip(),
            "client_id": client_id,
        },
    )
    assert refreshed.status_code == 200, refreshed.text
    register_all([refreshed.json()["refresh_token"], refreshed.json()["access_token"]])


def _submitting_with_oauth(
    root: Path,
    server: OAuthServer,
    client_id: str,
    account: ImapAccount,
    smtp: SmtpServer,
    *,
    imap: bool,
) -> tuple[Path, Path]:
    """An account whose submission alone logs in with the grant: with an IMAP password
    (`imap`), or a local account that sends. The configuration's path, and the refresh
    token's file."""
    tokens = device_grant(
        server, client_id=client_id, subject=account.username, scope=" ".join(SCOPES)
    )
    token_file = root / "secrets" / "mail.refresh"
    token_file.parent.mkdir(mode=0o700)
    token_file.write_text(tokens["refresh_token"] + "\n", "utf-8")
    token_file.chmod(0o600)
    register_all([tokens["refresh_token"], tokens["access_token"]])
    password = root / "imap.password"
    password.write_text(account.password + "\n", "utf-8")
    reading = (
        f"""Kind = "imap"
[Accounts.Imap]
Host = "{account.host}"
Port = {account.port}
Username = "{account.username}"
Tls = "none"
Secret = {{ File = "{password}" }}
"""
        if imap
        else 'Kind = "local"\n'
    )
    config = root / "mailfathom.toml"
    config.write_text(
        f"""
[Store]
DataDir = "{root / "data"}"

[[Accounts]]
Id = "mail"
DisplayName = "Mail"
{reading}
[Accounts.OAuth]
Provider = "generic"
ClientId = "{client_id}"
RefreshToken = {{ File = "{token_file}" }}
TokenEndpoint = "{server.token_endpoint}"
DeviceAuthorizationEndpoint = "{server.device_authorization_endpoint}"
Scopes = {list(SCOPES)!r}

[[Accounts.Folders]]
Remote = "INBOX"
Role = "Inbox"

[Accounts.Delivery]
Enabled = true
Address = "{account.username}@example.test"

[Accounts.Delivery.Smtp]
Host = "{smtp.host}"
Port = {smtp.port}
Tls = "starttls"
Auth = "oauth2"
Username = "{account.username}"
""".replace("'", '"'),
        "utf-8",
    )
    return config, token_file


def _consent(root: Path, config: Path, smtp: SmtpServer) -> CommandRun:
    """`mfctl account consent`, trusting the submission server's certificate."""
    return CommandRun(
        root,
        ["account", "consent", "--config", str(config), "--account", "mail"],
        {"SSL_CERT_FILE": str(smtp.ca_path)},
    )


@pytest.mark.parametrize("imap", [True, False], ids=["imap-password", "local"])
def test_an_account_granting_only_its_submission_is_granted_again(
    oauth_server: OAuthServer,
    oauth_imap_account: ImapAccount,
    oauth_smtp: SmtpServer,
    client_id: str,
    tmp_path: Path,
    imap: bool,
) -> None:
    config, token_file = _submitting_with_oauth(
        tmp_path, oauth_server, client_id, oauth_imap_account, oauth_smtp, imap=imap
    )
    oauth_server.revoke_refresh_tokens(oauth_imap_account.username)
    with Services.open(load_config(config)) as services:
        SqlAccountHealth(services.engine).consent_required("mail", datetime.now(UTC))
    _coded(_command(tmp_path, "accounts", "--config", str(config)), 31003)
    first = token_file.read_text("utf-8")

    run = _consent(tmp_path, config, oauth_smtp)
    oauth_server.approve_device(run.user_code(), oauth_imap_account.username)
    done = run.finish()
    assert done.returncode == 0, done.stdout + done.stderr
    second = token_file.read_text("utf-8")
    register_all([second.strip()])
    assert second != first
    listed = _command(tmp_path, "accounts", "--config", str(config))
    assert listed.returncode == 0, listed.stdout + listed.stderr


def test_a_submission_grant_for_another_person_leaves_the_working_one_in_place(
    oauth_server: OAuthServer,
    oauth_imap_account: ImapAccount,
    oauth_smtp: SmtpServer,
    client_id: str,
    tmp_path: Path,
) -> None:
    # The IMAP password still logs in: only the submission server can tell whether the new
    # grant is this account's.
    config, token_file = _submitting_with_oauth(
        tmp_path, oauth_server, client_id, oauth_imap_account, oauth_smtp, imap=True
    )
    working = token_file.read_text("utf-8")
    run = _consent(tmp_path, config, oauth_smtp)
    oauth_server.approve_device(run.user_code(), f"someone-else-{oauth_imap_account.username}")
    done = run.finish()
    _coded(done, 72002)
    assert token_file.read_text("utf-8") == working
