"""Sending from an account that submits with OAuth, through the test submission server that
validates tokens by introspection: a token that lapsed while the cache still took it as
fresh is refused once, replaced by one refresh, and the message arrives once; a token
refused again after that ends the attempt as refused credentials, without another round.
The sender's copy, appended to the Sent folder over a login of its own, does the same."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from mailfathom.domain.oauth import SaslMechanism
from mailfathom.domain.outgoing import Stage
from oauth.mail_accounts import FrozenClock, token_active, token_lifetime
from oauth.sending_accounts import (
    ACCOUNT,
    AGENT,
    BODY,
    RECIPIENT,
    Sender,
    folder_messages,
    held_for_consent,
    oauth_sender,
    send,
)
from servers.dovecot import DovecotServer, ImapAccount
from servers.oauth import OAuthServer
from servers.smtp import SmtpServer
from waiting import wait_for

MECHANISMS = [SaslMechanism.XOAUTH2, SaslMechanism.OAUTHBEARER]


def _sender(
    tmp_path: Path,
    oauth_server: OAuthServer,
    oauth_dovecot: DovecotServer,
    account: ImapAccount,
    smtp: SmtpServer,
    **options: object,
) -> Iterator[Sender]:
    """The account, with an access token already taken that the server has let lapse, and
    a token cache that still takes it as fresh."""
    with (
        token_lifetime(oauth_server, 2),
        oauth_sender(
            tmp_path,
            oauth_server,
            oauth_dovecot,
            account,
            smtp,
            token_clock=FrozenClock(),
            **options,
        ) as sender,
    ):
        held = sender.services.config.account(ACCOUNT)
        assert held is not None
        assert held.oauth is not None
        lapsed = sender.tokens.current(ACCOUNT, held.oauth)
        wait_for(lambda: not token_active(oauth_server, lapsed), "the token to lapse")
        assert sender.endpoint.requests == 1
        yield sender


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_a_lapsed_token_is_refreshed_once_and_the_message_received_once(
    tmp_path: Path,
    oauth_server: OAuthServer,
    oauth_dovecot: DovecotServer,
    oauth_imap_account: ImapAccount,
    oauth_smtp: SmtpServer,
    mechanism: SaslMechanism,
) -> None:
    for sender in _sender(
        tmp_path, oauth_server, oauth_dovecot, oauth_imap_account, oauth_smtp, mechanism=mechanism
    ):
        sent = send(sender.services, "minutes-lapsed")
        sender.deliver()
        record = sender.services.sending().outgoing.read(AGENT, sent)
        assert (record.stage, record.failure_code, record.attempt_count) == (Stage.SENT, None, 1)
        (received,) = oauth_smtp.received()
        assert (received.login, received.mechanism) == (
            oauth_imap_account.username,
            mechanism.value.upper(),
        )
        assert received.rcpt_tos == [RECIPIENT]
        assert BODY.strip().encode() in received.content
        # One refresh after the refusal; the Sent copy logged in with the token it gave.
        assert sender.endpoint.requests == 2
        (copy,) = folder_messages(oauth_imap_account, "Sent")
        assert BODY.strip().encode() in copy
        assert held_for_consent(sender.services) == []


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_a_token_refused_after_the_refresh_ends_the_attempt_as_refused_credentials(
    tmp_path: Path,
    oauth_server: OAuthServer,
    oauth_dovecot: DovecotServer,
    oauth_imap_account: ImapAccount,
    oauth_smtp: SmtpServer,
    mechanism: SaslMechanism,
) -> None:
    """The submission server's user is not the grant's: every token of it is refused."""
    for sender in _sender(
        tmp_path,
        oauth_server,
        oauth_dovecot,
        oauth_imap_account,
        oauth_smtp,
        mechanism=mechanism,
        smtp_username=f"{oauth_imap_account.username}-other",
    ):
        sent = send(sender.services, "minutes-refused")
        sender.deliver()
        record = sender.services.sending().outgoing.read(AGENT, sent)
        assert (record.stage, record.failure_code, record.attempt_count) == (
            Stage.FAILED,
            71005,
            1,
        )
        assert sender.endpoint.requests == 2
        assert oauth_smtp.received() == []
        assert folder_messages(oauth_imap_account, "Sent") == []
        assert held_for_consent(sender.services) == []


def test_the_senders_copy_refreshes_a_lapsed_token_once_on_its_own_login(
    tmp_path: Path,
    oauth_server: OAuthServer,
    oauth_dovecot: DovecotServer,
    oauth_imap_account: ImapAccount,
    oauth_smtp: SmtpServer,
) -> None:
    """The account submits with a password: the Sent copy is the first to meet the token."""
    for sender in _sender(
        tmp_path, oauth_server, oauth_dovecot, oauth_imap_account, oauth_smtp, smtp_auth="password"
    ):
        sent = send(sender.services, "minutes-copy")
        sender.deliver()
        assert sender.services.sending().outgoing.read(AGENT, sent).stage is Stage.SENT
        assert len(oauth_smtp.received()) == 1
        assert sender.endpoint.requests == 2
        (copy,) = folder_messages(oauth_imap_account, "Sent")
        assert BODY.strip().encode() in copy
