"""Verdicts and readings the trust tests store and expect back."""

from __future__ import annotations

from mailfathom.domain.authorship import AuthorshipReading, AuthorshipSignal, AuthorshipState
from mailfathom.domain.sender_verdict import (
    AuthenticatedBy,
    AuthorAuthentication,
    DmarcResult,
    SenderVerdict,
    VerdictSource,
)

AUTHENTICATED = SenderVerdict(
    author_authentication=AuthorAuthentication.AUTHENTICATED,
    verdict_source=VerdictSource.RECEIVING_SERVER,
    authenticated_domain="EXAMPLE.ORG",
    displayed_author_domain="EXAMPLE.ORG",
    authenticated_by=AuthenticatedBy.DKIM,
    dmarc=DmarcResult.PASS,
)
FAILED_LOCALLY = SenderVerdict(
    author_authentication=AuthorAuthentication.FAILED,
    verdict_source=VerdictSource.LOCAL_VERIFICATION,
    authenticated_domain=None,
    displayed_author_domain="XN--BCHER-KVA.EXAMPLE",
    authenticated_by=AuthenticatedBy.NONE,
    dmarc=DmarcResult.NOT_REPORTED,
)
LIKELY = AuthorshipReading(
    state=AuthorshipState.LIKELY,
    likelihood=0.875,
    signals=(AuthorshipSignal.TAG_CHARACTERS, AuthorshipSignal.UNSPACED_EM_DASHES),
    profile_revision="profile-7",
)
UNLIKELY = AuthorshipReading(AuthorshipState.UNLIKELY, 0.125, (), "profile-7")
