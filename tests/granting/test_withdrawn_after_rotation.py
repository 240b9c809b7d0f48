"""A grant `init` or `mfctl account consent` throws away after its login was tried is
withdrawn by the refresh token it holds at that moment: the trial's refresh may have rotated
the one first granted, and withdrawing that dead token (RFC 7009 section 2.2 answers 200 for
it) would leave the grant working at the provider."""

from __future__ import annotations

import uuid
from pathlib import Path

from servers.dovecot import ImapAccount
from servers.oauth import OAuthServer

from .init_runs import CommandRun, generic_flags, init_by_device, init_run

WITHDRAWN = "The access just granted was withdrawn at the provider."


def _counts(server: OAuthServer) -> tuple[int, int]:
    found = server.counts()
    return found.get("refresh", 0), found.get("revocation", 0)


def test_consent_withdraws_a_refused_grant_by_its_rotated_refresh_token(
    oauth_server: OAuthServer, oauth_imap_account: ImapAccount, client_id: str, tmp_path: Path
) -> None:
    config, _ = init_by_device(oauth_server, client_id, oauth_imap_account, tmp_path)
    other = f"someone-else-{uuid.uuid4().hex[:6]}"
    run = CommandRun(tmp_path, ["account", "consent", "--config", str(config), "--account", "mail"])
    refreshed, revoked = _counts(oauth_server)
    oauth_server.approve_device(run.user_code(), other)
    done = run.finish()
    assert done.returncode == 2, done.stdout + done.stderr
    assert "MailFathom error 31002:" in done.stderr
    after_refresh, after_revocation = _counts(oauth_server)
    # The trial refreshed, and the server rotated the refresh token it had granted.
    assert after_refresh > refreshed
    # The token withdrawn was a live one, and nothing of the grant is left working.
    assert after_revocation == revoked + 1
    assert oauth_server.live_refresh_tokens(other) == 0
    assert WITHDRAWN in done.stdout


def test_init_withdraws_a_refused_grant_by_its_rotated_refresh_token(
    oauth_server: OAuthServer, oauth_imap_account: ImapAccount, client_id: str, tmp_path: Path
) -> None:
    config = tmp_path / "mailfathom.toml"
    run = init_run(tmp_path, generic_flags(oauth_server, client_id, oauth_imap_account, config))
    other = f"someone-else-{uuid.uuid4().hex[:6]}"
    refreshed, revoked = _counts(oauth_server)
    oauth_server.approve_device(run.user_code(), other)
    done = run.finish()
    assert done.returncode == 2, done.stdout + done.stderr
    after_refresh, after_revocation = _counts(oauth_server)
    assert after_refresh > refreshed
    assert after_revocation == revoked + 1
    assert oauth_server.live_refresh_tokens(other) == 0
    assert WITHDRAWN in done.stdout
    assert not config.exists()
    assert not (tmp_path / "secrets" / "mail.refresh").exists()
