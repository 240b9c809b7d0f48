"""Where an account's connections say how its grant fared, for the operator's view of the
account's health (`mfctl accounts`).

Every connection that logs in with the account's grant, whoever opened it (a synchronization
run, the delivery pass, the sender's copy, a drafts-folder copy, a command checking the
mailbox), reports through its `OAuthLogin`: a grant the provider refused is written down,
and a server accepting the account's token clears it. Writing it here, where the token is
asked for, spares every caller remembering to.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from mailfathom.app.sync.ports import AccountHealthStore


class GrantHealth:
    def __init__(self, store: AccountHealthStore, clock: Callable[[], datetime]) -> None:
        self._store = store
        self._clock = clock

    def refused(self, account_id: str) -> None:
        """The provider refused the account's refresh token (`ConsentRequired`)."""
        self._store.consent_required(account_id, self._clock())

    def accepted(self, account_id: str) -> None:
        """A server accepted a token of the account: its grant works."""
        self._store.restored(account_id)
