"""What the console's use cases need from the store and from a password hasher.

The store never sees a session token: a session is found by the SHA-256 of its token, so a
copy of the store opens no session. The CSRF secret is kept as issued: it is worth nothing
without the session's cookie."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol


@dataclass(frozen=True, slots=True)
class ConsoleSession:
    """One visit. `signed_in` False is a visit to the sign-in form: it holds only the CSRF
    secret its form carries, and is replaced by a new session at sign-in."""

    token_hash: str
    csrf_secret: str
    signed_in: bool
    created_at: datetime
    expires_at: datetime


@dataclass(frozen=True, slots=True)
class LoginFailures:
    """Sign-in tries counted in a row for one client (or for all, under `EVERY_CLIENT`):
    every try is counted before its password is checked, and a right one forgets them."""

    count: int
    last_failed_at: datetime


EVERY_CLIENT = "*"
"""The failure count of all clients together; no client address is written so."""


class ConsoleStore(Protocol):
    """Synchronous; every method is one transaction."""

    def owner_password_hash(self) -> str | None:
        """The owner password's hash, or None before one is set."""
        ...

    def set_owner_password(self, password_hash: str, at: datetime) -> None:
        """Replace the owner password's hash and end every session: whoever was signed in
        with the old password signs in again."""
        ...

    def open_session(
        self, session: ConsoleSession, now: datetime, *, forms_kept: int | None = None
    ) -> None:
        """Write a new session (its token hash is new); sessions expired at `now` are
        deleted in the same transaction, and, with `forms_kept`, the oldest sessions not
        signed in beyond that many (the new one counted and kept)."""
        ...

    def find_session(self, token_hash: str, now: datetime) -> ConsoleSession | None:
        """The session under this token hash, or None when there is none or it expired."""
        ...

    def end_session(self, token_hash: str) -> bool:
        """Delete the session; False when there was none. Idempotent."""
        ...

    def failures(self, client: str) -> LoginFailures | None: ...

    def count_try(self, bounds: Sequence[tuple[str, int]], at: datetime) -> int:
        """Count one sign-in try under every `(client, free)` bound, if each is due at
        `at` (`domain.console.wait_after` after its count, `free` tries costing nothing),
        and answer 0; or count none and answer the seconds until every bound is due. The
        check and the count are one atomic step per bound, and all bounds one transaction:
        tries racing through one moment, in threads or processes, are counted one after
        another, so no more get through than would one at a time."""
        ...

    def forget_failures(self, client: str) -> None: ...


class PasswordHashing(Protocol):
    """A slow, salted password hash (argon2id). Both methods take time on purpose: call
    them away from an event loop."""

    def hash(self, password: str) -> str: ...

    def verify(self, password_hash: str, password: str) -> bool:
        """Whether `password` matches; False for a wrong one and for a hash that cannot be
        read."""
        ...


class OutboxState(enum.Enum):
    """How the overview groups sends: `HELD` waits for its `sendAfter`, `QUEUED` is due."""

    QUEUED = "queued"
    HELD = "held"
    SENDING = "sending"
    SENT = "sent"
    REFUSED = "refused"
    CANCELLED = "cancelled"


@dataclass(frozen=True, slots=True)
class OverviewCounts:
    alerts_waiting: int
    outbox: dict[OutboxState, int]
    # Message changes and folder creations alike, as the mailbox-changes page lists them.
    mutations_pending: int
    mutations_dead_lettered: int


class OverviewReader(Protocol):
    def counts(self, now: datetime) -> OverviewCounts:
        """Counts over the whole store, read in one transaction."""
        ...
