"""An account kept from synchronizing or sending until a person acts on it."""

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
