"""Checking an IMAP connection before it is written into a configuration: log in, list the
folders with their attributes, log out. Nothing is selected or read."""

from __future__ import annotations

from mailfathom.adapters.imap.session import ImapConnector
from mailfathom.domain.config import AccountConfig, AccountKind, ImapConnection
from mailfathom.domain.oauth import OAuthCredential
from mailfathom.domain.role_proposal import ServerFolder


def list_server_folders(
    account_id: str, connection: ImapConnection, oauth: OAuthCredential | None = None
) -> list[ServerFolder]:
    """The server's folders. Raises `SyncError` (31001) when the server cannot be reached or
    fails, `MailServerAuthError` (31002) when it refuses the credentials, and
    `SecretUnavailable` (11002) when the secret cannot be read. With `oauth` (a connection
    whose `auth` is OAuth) the login's access token is obtained from that credential, and
    `ConsentRequired` (31003) says the provider refused its refresh token."""
    account = AccountConfig(
        account_id=account_id,
        display_name=account_id,
        kind=AccountKind.IMAP,
        folders=(),
        imap=connection,
        oauth=oauth,
    )
    session = ImapConnector().open(account)
    try:
        return session.server_folders()
    finally:
        session.close()
