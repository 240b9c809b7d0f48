"""Where an account's connections say how its grant (and its IMAP login) fared, for the
operator's view of the account's health (`mfctl accounts`).

Every connection that logs in with the account's grant, whoever opened it (a synchronization
run, the delivery pass, the sender's copy, a drafts-folder copy, a command checking the
mailbox), reports through its `OAuthLogin`: a grant the provider refused is written down,
and a server accepting the account's token clears it. Writing it here, where the token is
asked for, spares every caller remembering to. An IMAP login the server refused is written
down the same way, with a password or a grant, and a password it accepted clears only that.

The account's access tokens say here whether its refresh token file holds the token in use:
a rotated one the file would not take is a warning (the account is not held, and a login
does not clear it), cleared once the file holds the token in use again.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from mailfathom.app.sync.ports import AccountHealthStore
from mailfathom.domain.account_health import HealthState


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

    def login_refused(self, account_id: str) -> None:
        """The IMAP server refused the account's login (`MailServerAuthError`)."""
        self._store.credentials_refused(account_id, self._clock())

    def password_accepted(self, account_id: str) -> None:
        """The IMAP server accepted the account's password: a refused login is over (a
        refused grant the account's submission may use is not)."""
        self._store.restored(account_id, HealthState.CREDENTIALS_REFUSED)

    def token_unsaved(self, account_id: str) -> None:
        """A rotated refresh token of the account could not be written to its file."""
        self._store.refresh_token_unsaved(account_id, self._clock())

    def token_saved(self, account_id: str) -> None:
        """The account's refresh token file holds the token this process uses."""
        self._store.refresh_token_saved(account_id)

    def granted_again(self, account_id: str) -> None:
        """A new grant that logs in was written over the account's file (`mfctl account
        consent`): whatever held the account is over, and the file holds the token to use."""
        self._store.restored(account_id)
        self._store.refresh_token_saved(account_id)
