"""Every connection that meets a grant the provider refused writes the account's health down
the same way, whoever opened it (a command checking the mailbox, the delivery pass, the
sender's copy, a drafts-folder copy), and a successful login with a new grant clears it."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.adapters.sql.account_health import SqlAccountHealth
from mailfathom.app.drafting.composition import DraftRequest
from mailfathom.bootstrap import Services
from mailfathom.domain.account_health import HealthState
from mailfathom.domain.drafts import CopyState
from mailfathom.domain.errors import ConsentRequired
from mailfathom.domain.outgoing import Stage
from oauth.sending_accounts import (
    ACCOUNT,
    AGENT,
    BODY,
    RECIPIENT,
    SUBJECT,
    Sender,
    folder_messages,
    held_for_consent,
    oauth_sender,
    send,
)
from servers.dovecot import DovecotServer, ImapAccount
from servers.oauth import OAuthServer
from servers.smtp import SmtpServer

HELD = [(ACCOUNT, HealthState.CONSENT_REQUIRED, 31003)]


def _refused(
    tmp_path: Path,
    oauth_server: OAuthServer,
    oauth_dovecot: DovecotServer,
    account: ImapAccount,
    smtp: SmtpServer,
    smtp_auth: str,
) -> Iterator[Sender]:
    """A deployment whose one account's grant the provider no longer accepts."""
    with oauth_sender(
        tmp_path, oauth_server, oauth_dovecot, account, smtp, smtp_auth=smtp_auth
    ) as sender:
        oauth_server.revoke_refresh_tokens(account.username)
        yield sender


@pytest.fixture
def refused(
    tmp_path: Path,
    oauth_server: OAuthServer,
    oauth_dovecot: DovecotServer,
    oauth_imap_account: ImapAccount,
    oauth_smtp: SmtpServer,
) -> Iterator[Sender]:
    yield from _refused(
        tmp_path, oauth_server, oauth_dovecot, oauth_imap_account, oauth_smtp, "oauth2"
    )


@pytest.fixture
def refused_imap_only(
    tmp_path: Path,
    oauth_server: OAuthServer,
    oauth_dovecot: DovecotServer,
    oauth_imap_account: ImapAccount,
    oauth_smtp: SmtpServer,
) -> Iterator[Sender]:
    """The account submits with a password: only its IMAP connections use the grant."""
    yield from _refused(
        tmp_path, oauth_server, oauth_dovecot, oauth_imap_account, oauth_smtp, "password"
    )


def test_a_login_outside_the_synchronization_records_it_and_a_new_grant_clears_it(
    refused: Sender,
) -> None:
    """What `sync`, `serve` and `mfctl accounts` do first: check the mailbox's folders."""
    account = refused.services.config.account(ACCOUNT)
    assert account is not None
    with pytest.raises(ConsentRequired):
        refused.services.connectors.open(account)
    assert held_for_consent(refused.services) == HELD

    refused.grant_again()
    refused.services.connectors.open(account).close()
    assert held_for_consent(refused.services) == []


def test_the_delivery_pass_records_it_and_a_submission_with_a_new_grant_clears_it(
    refused: Sender,
) -> None:
    sent = send(refused.services, "minutes-1")
    refused.deliver()
    outgoing = refused.services.sending().outgoing
    waiting = outgoing.read(AGENT, sent)
    assert (waiting.stage, waiting.failure_code) == (Stage.QUEUED, 71009)
    assert held_for_consent(refused.services) == HELD

    refused.grant_again()
    refused.clock.advance(60)
    refused.deliver()
    assert outgoing.read(AGENT, sent).stage is Stage.SENT
    (received,) = refused.smtp.received()
    assert received.rcpt_tos == [RECIPIENT]
    assert held_for_consent(refused.services) == []


def test_the_senders_copy_records_it(refused_imap_only: Sender) -> None:
    sent = send(refused_imap_only.services, "minutes-2")
    refused_imap_only.deliver()
    assert refused_imap_only.services.sending().outgoing.read(AGENT, sent).stage is Stage.SENT
    assert len(refused_imap_only.smtp.received()) == 1
    assert folder_messages(refused_imap_only.account, "Sent") == []
    assert held_for_consent(refused_imap_only.services) == HELD


def test_a_drafts_folder_copy_records_it(refused: Sender) -> None:
    saved = refused.services.drafting().save.save(
        AGENT,
        DraftRequest(plain_text_body=BODY, account=ACCOUNT, subject=SUBJECT, to=[RECIPIENT]),
    )
    assert saved.state is CopyState.HELD
    assert folder_messages(refused.account, "Drafts") == []
    assert held_for_consent(refused.services) == HELD


def test_an_account_configured_without_a_grant_since_is_not_held(tmp_path: Path) -> None:
    """Its logins no longer use a grant, so none of them would ever clear the state."""
    config = tmp_path / "mailfathom.toml"
    config.write_text(
        f'[Store]\nDataDir = "{tmp_path / "data"}"\n\n[[Accounts]]\nId = "{ACCOUNT}"\n'
        'DisplayName = "Mail"\nKind = "local"\n',
        "utf-8",
    )
    with Services.open(load_config(config)) as services:
        SqlAccountHealth(services.engine).consent_required(ACCOUNT, datetime.now(UTC))
        assert held_for_consent(services) == []
