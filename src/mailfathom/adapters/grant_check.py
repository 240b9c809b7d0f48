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
from mailfathom.adapters.smtp.probe import check_submission
from mailfathom.domain.config import AccountConfig, SecretRef
from mailfathom.domain.oauth import ConnectionAuth


def grant_user(account: AccountConfig) -> str | None:
    """The user the account's grant logs in as: its IMAP login where that uses the grant,
    else its submission's."""
    if account.imap is not None and account.imap.auth is ConnectionAuth.OAUTH2:
        return account.imap.username
    smtp = account.delivery.smtp if account.delivery is not None else None
    if smtp is not None and smtp.auth is ConnectionAuth.OAUTH2:
        return smtp.username
    return None


def try_grant(account: AccountConfig, refresh_token: SecretRef) -> None:
    """Log in as the account with its OAuth block reading the refresh token from
    `refresh_token`, on the connection that uses the grant: its IMAP server where that
    logs in with OAuth, else its submission server. Returns when the server accepted it;
    raises as a login does: `MailServerAuthError` (31002) or `SubmissionCheckFailed`
    (72002) when the server refused the token, `ConsentRequired` (31003) when the
    provider refused the refresh token, `SyncError` (31001) or `SubmissionCheckFailed`
    (72001) when the server could not be reached."""
    oauth = account.oauth
    assert oauth is not None
    credential = dataclasses.replace(oauth, refresh_token=refresh_token)
    tokens = AccessTokens()
    try:
        if account.imap is not None and account.imap.auth is ConnectionAuth.OAUTH2:
            trial = dataclasses.replace(account, oauth=credential)
            ImapConnector(tokens).open(trial).close()
            return
        smtp = account.delivery.smtp if account.delivery is not None else None
        assert smtp is not None
        assert smtp.auth is ConnectionAuth.OAUTH2
        check_submission(account.account_id, smtp, credential=credential, tokens=tokens)
    finally:
        tokens.close()
