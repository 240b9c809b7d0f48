"""What synchronization established about who sent a message, as it is stored and published.

A verdict is reached once, when a message is stored (or when an operator verifies stored mail
again), and never on the read path. Two readings can produce it: a trusted receiving server's
`Authentication-Results` header (RFC 8601), or, where no such header exists, this deployment's
own check of the message's DKIM signatures (RFC 6376). Which one did is `verdict_source`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class AuthorAuthentication(enum.Enum):
    """What was established about the author the From header displays."""

    AUTHENTICATED = "authenticated"
    FAILED = "failed"
    NOT_ESTABLISHED = "notEstablished"


class DeploymentTrust(enum.Enum):
    """Whether this deployment's own trusted-sender configuration names that author."""

    TRUSTED = "trusted"
    UNKNOWN = "unknown"


class VerdictSource(enum.Enum):
    RECEIVING_SERVER = "receivingServer"
    LOCAL_VERIFICATION = "localVerification"


class AuthenticatedBy(enum.Enum):
    """The check that established `authenticated_domain`; never SPF on a local verdict."""

    DKIM = "dkim"
    SPF = "spf"
    NONE = "none"


class DmarcResult(enum.Enum):
    """The DMARC result a trusted receiving server reported (RFC 8601 section 2.7.1 names the
    values); `NOT_REPORTED` where it reported none, and always on a local verdict."""

    PASS = "pass"  # noqa: S105 (a DMARC result, not a secret)
    FAIL = "fail"
    NONE = "none"
    TEMPERROR = "temperror"
    PERMERROR = "permerror"
    NOT_REPORTED = "notReported"


class VerdictState(enum.Enum):
    """Whether a stored message was verified at all. Mail stored before this deployment
    verified anything is `NOT_YET_VERIFIED` until `mfctl mailbox reverify` reaches it, which
    is why its author is not established."""

    VERIFIED = "verified"
    NOT_YET_VERIFIED = "notYetVerified"


@dataclass(frozen=True, slots=True)
class SenderVerdict:
    """One message's verdict with its evidence.

    Both domains are in the comparison form the store keeps: upper-cased, and an
    internationalized name in its ASCII (IDNA) form. `None` is an ordinary outcome: nothing
    authenticated, or the message wrote no usable From mailbox.
    """

    author_authentication: AuthorAuthentication
    verdict_source: VerdictSource
    authenticated_domain: str | None
    displayed_author_domain: str | None
    authenticated_by: AuthenticatedBy
    dmarc: DmarcResult
    state: VerdictState = VerdictState.VERIFIED


NOT_YET_VERIFIED = SenderVerdict(
    author_authentication=AuthorAuthentication.NOT_ESTABLISHED,
    verdict_source=VerdictSource.RECEIVING_SERVER,
    authenticated_domain=None,
    displayed_author_domain=None,
    authenticated_by=AuthenticatedBy.NONE,
    dmarc=DmarcResult.NOT_REPORTED,
    state=VerdictState.NOT_YET_VERIFIED,
)
