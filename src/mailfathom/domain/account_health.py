"""An account kept from synchronizing or sending until a person acts on it."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime


class HealthState(enum.Enum):
    """Why an account is held. `CONSENT_REQUIRED`: the provider refused the refresh token
    the account logs in with; only the person can grant access again."""

    CONSENT_REQUIRED = "consent_required"


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
