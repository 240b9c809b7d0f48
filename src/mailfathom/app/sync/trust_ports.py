"""The ports synchronization reads a message's sender verdict and authorship reading through.

Both are optional: where neither is wired, nothing is recorded for a message, and it reads
back as not yet verified and not assessed. Implementations are shared by the worker threads
of a synchronization and so must be thread-safe, and they never raise for any input: an
internal failure is an answer (`notEstablished`, `NOT_ASSESSED`), never an exception.
"""

from __future__ import annotations

from typing import Protocol

from mailfathom.domain.authorship import AuthorshipReading
from mailfathom.domain.sender_verdict import SenderVerdict


class SenderVerifier(Protocol):
    def verify(
        self, raw: bytes, *, headers_only: bool, trusted_authserv_ids: frozenset[str]
    ) -> SenderVerdict:
        """The verdict on `raw`: the whole message, or only its header block when
        `headers_only` (then only a trusted Authentication-Results header can establish
        anything; DKIM needs the body). `trusted_authserv_ids` are the account's configured
        ids, compared case-insensitively."""
        ...


class AuthorshipAssessor(Protocol):
    def assess(self, subject: str | None, plain_text: str) -> AuthorshipReading:
        """How much the text reads as machine written."""
        ...
