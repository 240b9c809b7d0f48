"""What the console's callers and recent-calls pages, and the MCP endpoint's admission of
console keys, need from the store.

A key is kept as the SHA-256 of its text: a copy of the store admits nobody. A recorded tool
call holds the tool's name as the endpoint counts it, the caller entry's name, the outcome,
the code and the duration, and never an argument or a result."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol


@dataclass(frozen=True, slots=True)
class IssuedKey:
    """A key created in the console for the caller entry named `caller`. `form_nonce` is
    the one-use value of the form that asked for it, so a form sent twice makes one key."""

    key_id: str
    caller: str
    key_sha256: str
    form_nonce: str
    created_at: datetime
    revoked_at: datetime | None = None


class DuplicateForm(Exception):
    """A key was already created from the form carrying this nonce."""


class TooManyKeys(Exception):
    """The caller entry holds as many active keys as it may already."""


class ApiKeyStore(Protocol):
    """Synchronous; every method is one transaction."""

    def add(self, key: IssuedKey, most: int) -> None:
        """Keep a new key. Raises `DuplicateForm` when a key was already made from the same
        form (its nonce), else `TooManyKeys` when the key's entry holds `most` active keys
        already, and keeps nothing then. Both are checked in the transaction that writes,
        other writers of keys waiting: two adds at once cannot take an entry past `most`."""
        ...

    def find(self, key_id: str) -> IssuedKey | None:
        """The key under this identifier, revoked or not; None when there is none."""
        ...

    def active(self) -> list[IssuedKey]:
        """Every key not revoked, oldest first."""
        ...

    def revoke(self, key_id: str, at: datetime, keep_revoked: int) -> bool:
        """Mark the key revoked at `at`; False when there is no such key or it already was.
        From the commit on, `find` answers it revoked to every reader. In the same
        transaction, every revoked key but the `keep_revoked` revoked last is deleted (`find`
        answers None for it: it admits nothing either way)."""
        ...


@dataclass(frozen=True, slots=True)
class ToolCallRecord:
    """One answered tool call. `call_id` is given by the store (None before it is kept);
    a larger one was kept later."""

    at: datetime
    tool: str
    caller: str | None
    outcome: str
    code: int | None
    duration_us: int
    call_id: int | None = None


class ToolCallLog(Protocol):
    """Synchronous; every method is one transaction."""

    def append(self, calls: Sequence[ToolCallRecord], keep: int) -> None:
        """Keep the calls, the later of two given later in `calls` being kept later, and
        trim the log to its newest `keep` calls in the same transaction whenever it has
        grown by a tenth of `keep` since it was last trimmed: it always holds the newest
        `keep` calls (or every call, while fewer were made) and at most about a tenth more
        (an identity no write kept may skip the multiple; the next one trims)."""
        ...

    def newest(
        self,
        limit: int,
        before: int | None = None,
        caller: str | None = None,
        outcome: str | None = None,
    ) -> list[ToolCallRecord]:
        """At most `limit` calls, newest first, each kept before the call `before` (when
        given), made by `caller` and answered with `outcome` (when given)."""
        ...

    def callers(self) -> list[str]:
        """The caller names the kept calls name, sorted."""
        ...
