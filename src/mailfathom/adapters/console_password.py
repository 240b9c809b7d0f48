"""The owner password's hash: argon2id with argon2-cffi's recommended parameters (RFC 9106's
second recommended option), in the PHC string format that carries its own parameters, so a
hash written under older parameters still verifies.

Each hash takes 64 MiB for a moment: at most `HASHES_AT_ONCE` run at a time in the process,
the others wait their turn, so a burst of sign-ins costs time, never the machine's memory."""

from __future__ import annotations

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from mailfathom.adapters.fair_gate import FairGate

HASHES_AT_ONCE = 2
_TURNS = FairGate(HASHES_AT_ONCE)


class Argon2Passwords:
    def __init__(self, hasher: PasswordHasher | None = None) -> None:
        self._hasher = hasher or PasswordHasher()

    def hash(self, password: str) -> str:
        with _TURNS:
            return self._hasher.hash(password)

    def verify(self, password_hash: str, password: str) -> bool:
        try:
            with _TURNS:
                return self._hasher.verify(password_hash, password)
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return False
