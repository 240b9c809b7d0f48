"""Small stand-ins for the trust ports, for testing what is stored and published.

The verifier answers from a test header (`X-Test-Verdict: authenticated` and so on) so a
test decides each message's verdict in the mail it writes; the assessor reads the word
`generated` in the text as machine written. Both keep what they were asked, under a lock,
since synchronization asks from several threads.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from email.parser import BytesHeaderParser

from mailfathom.domain.authorship import (
    NOT_ASSESSED,
    AuthorshipReading,
    AuthorshipSignal,
    AuthorshipState,
)
from mailfathom.domain.sender_verdict import (
    AuthenticatedBy,
    AuthorAuthentication,
    DmarcResult,
    SenderVerdict,
    VerdictSource,
)

PROFILE = "fake-profile-1"


def _from_domain(raw: bytes) -> str | None:
    author = BytesHeaderParser().parsebytes(raw).get("From", "")
    address = str(author).rpartition("<")[2].rstrip(">").strip()
    return address.rpartition("@")[2].upper() or None


@dataclass
class FakeVerifier:
    asked: list[tuple[bool, frozenset[str]]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def verify(
        self, raw: bytes, *, headers_only: bool, trusted_authserv_ids: frozenset[str]
    ) -> SenderVerdict:
        with self.lock:
            self.asked.append((headers_only, trusted_authserv_ids))
        said = str(BytesHeaderParser().parsebytes(raw).get("X-Test-Verdict", "")).strip()
        domain = _from_domain(raw)
        if said == "authenticated":
            return SenderVerdict(
                AuthorAuthentication.AUTHENTICATED,
                VerdictSource.RECEIVING_SERVER,
                domain,
                domain,
                AuthenticatedBy.DKIM,
                DmarcResult.PASS,
            )
        if said == "failed":
            return SenderVerdict(
                AuthorAuthentication.FAILED,
                VerdictSource.LOCAL_VERIFICATION,
                None,
                domain,
                AuthenticatedBy.NONE,
                DmarcResult.NOT_REPORTED,
            )
        return SenderVerdict(
            AuthorAuthentication.NOT_ESTABLISHED,
            VerdictSource.RECEIVING_SERVER,
            None,
            domain,
            AuthenticatedBy.NONE,
            DmarcResult.NOT_REPORTED,
        )


@dataclass
class FakeAssessor:
    asked: list[tuple[str | None, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def assess(self, subject: str | None, plain_text: str) -> AuthorshipReading:
        with self.lock:
            self.asked.append((subject, plain_text))
        if not plain_text.strip():
            return NOT_ASSESSED
        if "generated" in plain_text:
            return AuthorshipReading(
                AuthorshipState.LIKELY,
                0.9,
                (AuthorshipSignal.HIDDEN_CHARACTERS, AuthorshipSignal.FORMULAIC_FRAMING),
                PROFILE,
            )
        return AuthorshipReading(AuthorshipState.UNLIKELY, 0.1, (), PROFILE)


class BrokenVerifier:
    """A verifier that breaks its promise never to raise."""

    def verify(
        self, raw: bytes, *, headers_only: bool, trusted_authserv_ids: frozenset[str]
    ) -> SenderVerdict:
        raise RuntimeError("resolver exploded")
