"""An account kept from synchronizing or sending until a person acts on it, and what an
operator should mend on an account that is not held (a warning: it still works)."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime


class HealthState(enum.Enum):
    """Why an account is held. `CONSENT_REQUIRED`: the provider refused the refresh token
    the account logs in with; only the person can grant access again.
    `CREDENTIALS_REFUSED`: the IMAP server refused the account's login (its password, or
    every access token its grant gave); asking again with the same secret cannot help, and
    some servers lock a mailbox out after a few refused logins, so nothing is retried until
    the secret changes or the process starts again."""

    CONSENT_REQUIRED = "consent_required"
    CREDENTIALS_REFUSED = "credentials_refused"


@dataclass(frozen=True, slots=True)
class AccountHealth:
    account_id: str
    state: HealthState
    code: int
    since: datetime


REFRESH_TOKEN_UNSAVED = 31009
"""A refresh token the provider issued the account could not be written to its file: the
account works on the token kept in memory, which a restarted process no longer has."""


class WarningState(enum.Enum):
    """What an operator should mend on an account that is not held: it keeps synchronizing
    and sending, never held by a warning. `REFRESH_TOKEN_UNSAVED`: the provider issued a
    new refresh token that its file would not take; it is written again a minute after each
    try, and a process started before that presents the replaced one."""

    REFRESH_TOKEN_UNSAVED = "refresh_token_unsaved"  # noqa: S105 (a state's name, not a secret)


@dataclass(frozen=True, slots=True)
class AccountWarning:
    account_id: str
    state: WarningState
    code: int
    since: datetime


def consent_message(account_ids: list[str]) -> str:
    """What an operator is told about accounts waiting for consent, and the fix."""
    names = ", ".join(f"'{a}'" for a in account_ids)
    return (
        f"The provider refused the refresh token of account {names}: nothing is synchronized "
        "or sent for it until the person grants access again with `mfctl account consent`, "
        "which writes the new refresh token where the configuration names it."
    )


def refused_message(account_ids: list[str]) -> str:
    """What an operator is told about accounts whose IMAP login the server refused."""
    names = ", ".join(f"'{a}'" for a in account_ids)
    return (
        f"The mail server refused the login of account {names}: nothing is synchronized for "
        "it until the secret it logs in with is replaced (its password, or with OAuth a new "
        "grant from `mfctl account consent`); a running synchronization resumes by itself."
    )


def unsaved_message(account_ids: list[str]) -> str:
    """What an operator is told about accounts whose new refresh token is kept in memory
    only, and what to do before the process ends."""
    names = ", ".join(f"'{a}'" for a in account_ids)
    return (
        f"The new refresh token the provider issued to account {names} could not be written "
        "to its file; the account still synchronizes and sends on the token kept in memory. "
        "Make the file and its directory writable again (free disk space, a file system "
        "mounted read-write, write permission for the service's user): the token is written "
        "a minute after the last try, at the account's next connection. Do not restart the "
        "process, or run a command that logs in to the account, before that: it would "
        "present the replaced token, which a provider that takes refresh tokens once "
        "refuses, and the person would have to grant access again (`mfctl account consent`)."
    )
