"""Signing the owner in and out of the console, and recognizing a signed-in visit.

A visit to the sign-in form gets a session of its own (not signed in) holding the CSRF
secret its form carries; signing in ends that session and opens a new one under a new
token, so a token planted before sign-in (session fixation) is worth nothing after it.
Only the SHA-256 of a token reaches the store.

Tries are bounded per client address and for all clients together
(`domain.console.wait_after`): past the free ones, every try waits, right password or not,
so waiting is the only way through and a guesser learns nothing from a try made too soon.
A try is counted before its password is hashed, in one step with the check that it is due
(`ConsoleStore.count_try`), and a right password forgets the count: requests sent all at
once get no more tries than requests sent one by one.
"""

from __future__ import annotations

import enum
import hashlib
import hmac
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from mailfathom.app.console.ports import (
    EVERY_CLIENT,
    ConsoleSession,
    ConsoleStore,
    PasswordHashing,
)
from mailfathom.domain.codes import CommandCode
from mailfathom.domain.console import (
    FREE_FAILURES_OVERALL,
    FREE_FAILURES_PER_CLIENT,
    SESSION_LIFETIME_SECONDS,
    SIGN_IN_FORMS_KEPT,
    SIGN_IN_WINDOW_SECONDS,
    password_problem,
    signed_in_lately,
)
from mailfathom.domain.errors import ConfigurationError


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class Visit:
    """A session as its holder sees it: the token for the cookie, and the session."""

    token: str
    session: ConsoleSession


class SignInRefused(enum.Enum):
    UNSET = "unset"
    MISMATCH = "mismatch"
    WAIT = "wait"
    # The form's session is gone or its CSRF token does not match it.
    FORM_EXPIRED = "form_expired"


@dataclass(frozen=True, slots=True)
class Refused:
    reason: SignInRefused
    retry_after_seconds: int = 0


class ConsoleAccess:
    def __init__(
        self,
        store: ConsoleStore,
        hashing: PasswordHashing,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        new_token: Callable[[], str] = lambda: secrets.token_urlsafe(32),
    ) -> None:
        self._store = store
        self._hashing = hashing
        self._clock = clock
        self._new_token = new_token

    def password_is_set(self) -> bool:
        return self._store.owner_password_hash() is not None

    def set_password(self, password: str) -> None:
        """Store the argon2id hash of a new owner password; every session ends."""
        problem = password_problem(password)
        if problem is not None:
            raise ConfigurationError(problem, code=int(CommandCode.CONSOLE_PASSWORD_NOT_USABLE))
        self._store.set_owner_password(self._hashing.hash(password), self._clock())

    def visit(self) -> Visit:
        """A new session for a visitor to the sign-in form. Anyone may ask for one without
        a cookie, so only the newest `SIGN_IN_FORMS_KEPT` are kept: a loop of visits costs
        the store no more rows than that."""
        return self._open(signed_in=False, lasts=SIGN_IN_WINDOW_SECONDS)

    def session(self, token: str | None) -> ConsoleSession | None:
        """The live session the token opens, signed in or not; None for no token, an
        unknown one or an expired one."""
        if not token:
            return None
        return self._store.find_session(token_hash(token), self._clock())

    def signed_in(self, token: str | None) -> ConsoleSession | None:
        found = self.session(token)
        return found if found is not None and found.signed_in else None

    def sign_in(
        self, token: str | None, csrf: str | None, password: str, client: str
    ) -> Visit | Refused:
        """A new signed-in session, the form's session ended; or why not. `client` is the
        address the request came from (its tries are counted under it)."""
        form = self.session(token)
        if form is None or not csrf_holds(form, csrf):
            return Refused(SignInRefused.FORM_EXPIRED)
        stored = self._store.owner_password_hash()
        if stored is None:
            return Refused(SignInRefused.UNSET)
        bounds = ((client, FREE_FAILURES_PER_CLIENT), (EVERY_CLIENT, FREE_FAILURES_OVERALL))
        wait = self._store.count_try(bounds, self._clock())
        if wait > 0:
            return Refused(SignInRefused.WAIT, wait)
        if len(password) > 4096 or not self._hashing.verify(stored, password):
            return Refused(SignInRefused.MISMATCH)
        self._store.forget_failures(client)
        self._store.forget_failures(EVERY_CLIENT)
        assert token is not None
        return self.promote(token)

    def promote(self, token: str) -> Visit:
        """End the sign-in form's session and open a signed-in one under a new token: the
        last step of every way of signing in, once the owner is known."""
        self._store.end_session(token_hash(token))
        return self._open(signed_in=True, lasts=SESSION_LIFETIME_SECONDS)

    def lately(self, session: ConsoleSession) -> bool:
        """Whether `session` signed in within the last few minutes (a signed-in session is
        opened at its sign-in), as adding or removing a sign-in credential needs."""
        return session.signed_in and signed_in_lately(session.created_at, self._clock())

    def sign_out(self, token: str | None) -> None:
        if token:
            self._store.end_session(token_hash(token))

    def _open(self, *, signed_in: bool, lasts: int) -> Visit:
        now = self._clock()
        token = self._new_token()
        session = ConsoleSession(
            token_hash=token_hash(token),
            csrf_secret=self._new_token(),
            signed_in=signed_in,
            created_at=now,
            expires_at=now + timedelta(seconds=lasts),
        )
        forms_kept = None if signed_in else SIGN_IN_FORMS_KEPT
        self._store.open_session(session, now, forms_kept=forms_kept)
        return Visit(token, session)


def csrf_holds(session: ConsoleSession, presented: str | None) -> bool:
    """Whether a form's CSRF token is its session's, compared in constant time."""
    if not presented:
        return False
    return hmac.compare_digest(session.csrf_secret.encode(), presented.encode())
