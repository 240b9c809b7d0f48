"""What the console's passkeys need from the store and from a WebAuthn implementation.

The store keeps a passkey's public key and signature count, never anything secret: a copy of
it signs nobody in. A challenge is kept beside the session it was issued to, found by the
session's token hash as the session is, and given back once."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol


class Ceremony(enum.Enum):
    REGISTER = "register"
    SIGN_IN = "sign-in"


@dataclass(frozen=True, slots=True)
class Passkey:
    """One of the owner's passkeys. `credential_id` and `user_handle` are base64url."""

    credential_id: str
    user_handle: str
    public_key: bytes
    sign_count: int
    label: str
    created_at: datetime
    last_used_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class NewCredential:
    """What a verified registration yields to be kept."""

    credential_id: str
    public_key: bytes
    sign_count: int


@dataclass(frozen=True, slots=True)
class Assertion:
    """What a verified sign-in yields: the credential and the count it reported."""

    credential_id: str
    sign_count: int


class TooManyPasskeys(Exception):
    """The owner holds as many passkeys as they may already."""


class PasskeyStore(Protocol):
    """Synchronous; every method is one transaction."""

    def passkeys(self) -> list[Passkey]:
        """Every passkey, oldest first."""
        ...

    def passkey(self, credential_id: str) -> Passkey | None: ...

    def add_passkey(
        self, passkey: Passkey, *, only_if_first: bool, most: int, first_code: str | None = None
    ) -> bool:
        """Keep a new passkey; False when its credential id is kept already, or, with
        `only_if_first`, when the owner has a password or a passkey already or the code
        whose SHA-256 is `first_code` is not the one waiting (unexpired at the passkey's
        `created_at`). Raises `TooManyPasskeys`, keeping nothing, when the owner holds
        `most` passkeys already. All of it is checked in the same transaction, with other
        adds waiting, and a first passkey kept deletes the code: two first enrolments at
        once cannot both succeed, nor two enrolments at once take the owner past `most`."""
        ...

    def open_first_enrolment(self, code_sha256: str, expires_at: datetime) -> None:
        """Keep the SHA-256 of a new first-passkey code, replacing any earlier one."""
        ...

    def first_enrolment_waiting(self, now: datetime) -> bool:
        """Whether a first-passkey code is kept and unexpired at `now`."""
        ...

    def record_use(self, credential_id: str, was: int, now: int, at: datetime) -> bool:
        """Move the passkey's signature count from `was` to `now` and note its use; False
        when its count is no longer `was` (another sign-in used it meanwhile) or it is gone."""
        ...

    def remove_passkey(self, credential_id: str, *, keep: str) -> bool:
        """Remove the passkey and, in the same transaction, every console session but the
        one under the token hash `keep`; False (nothing ended) when there was none."""
        ...

    def issue_challenge(
        self, token_hash: str, ceremony: Ceremony, challenge: str, now: datetime, lasts: timedelta
    ) -> None:
        """Keep `challenge` as the session's only one for `ceremony` (an earlier one is
        replaced) until `now + lasts`; every challenge expired at `now`, and every one of a
        session no longer kept, is deleted."""
        ...

    def take_challenge(self, token_hash: str, ceremony: Ceremony, now: datetime) -> str | None:
        """The session's challenge for `ceremony`, deleted as it is read, so only one caller
        ever gets it; None when there is none or it expired."""
        ...


class PasskeyCeremonies(Protocol):
    """The WebAuthn relying party's side: options for the browser, and the verification of
    what the browser answers (`response`: `PublicKeyCredential` as JSON). A verification
    answers None for anything it refuses; why is not told to the visitor."""

    def registration_options(
        self, *, rp_id: str, user_handle: bytes, challenge: bytes, existing: list[str]
    ) -> str: ...

    def registration(
        self, response: str, *, rp_id: str, origin: str, challenge: bytes
    ) -> NewCredential | None: ...

    def sign_in_options(self, *, rp_id: str, challenge: bytes) -> str: ...

    def presented_id(self, response: str) -> str | None:
        """The credential id a sign-in response names, or None when it cannot be read."""
        ...

    def assertion(
        self, response: str, *, rp_id: str, origin: str, challenge: bytes, passkey: Passkey
    ) -> Assertion | None: ...
