"""Trying a new grant before it replaces the one an account logs in with (`mfctl account
consent`).

A person asked to grant access again may sign in as somebody else (another of their
accounts at the same provider): the provider issues a good refresh token, and the mail
server refuses it for this mailbox. Written over the account's file first, it would replace
a grant that still worked, and every running process would pick it up and fail. So the
login is tried with the new refresh token where the trial keeps it (a file of its own, so a
provider rotating it at the first refresh leaves the rotated one there), with access tokens
of its own, reporting nothing to the account's health; only a login the server accepts lets
the caller write it over the old.
"""

from __future__ import annotations

import dataclasses

from mailfathom.adapters.imap.session import ImapConnector
from mailfathom.adapters.oauth.tokens import AccessTokens
from mailfathom.domain.config import AccountConfig, SecretRef


def try_grant(account: AccountConfig, refresh_token: SecretRef) -> None:
    """Log in as the account with its OAuth block reading the refresh token from
    `refresh_token`. Returns when the server accepted it; raises as a login does:
    `MailServerAuthError` (31002) when the server refused the token, `ConsentRequired`
    (31003) when the provider refused the refresh token, `SyncError` (31001) when the
    server could not be reached."""
    oauth = account.oauth
    assert oauth is not None
    trial = dataclasses.replace(
        account, oauth=dataclasses.replace(oauth, refresh_token=refresh_token)
    )
    tokens = AccessTokens()
    try:
        assert account.imap is not None
        ImapConnector(tokens).open(trial).close()
    finally:
        tokens.close()
