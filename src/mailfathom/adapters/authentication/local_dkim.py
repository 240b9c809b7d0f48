"""This deployment's own check of a message's DKIM signatures (RFC 6376), with dkimpy.

It is the fallback where no trusted receiving server reported anything. It establishes less
than that server could: no SPF is attempted (the connecting address is not known here) and no
DMARC policy is looked up, so `authenticated_by` is dkim or none and `dmarc` is notReported.

Each signature ends in one of four ways. It verified against a key its domain publishes
(pass); it did not verify against a resolved key, or it is invalid on its face, expired or
malformed (fail); its key could not be had, whether the name server said there is none,
failed, or did not answer within the deadline or the message's budget (unresolved: not
evidence either way); or it names no domain at all (malformed, ignored).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import dkim
from dkim.util import InvalidTagValueList, parse_tag_value

from mailfathom.adapters.authentication.dns_keys import Outcome
from mailfathom.adapters.authentication.domains import aligned, comparison_domain
from mailfathom.adapters.authentication.key_session import QUIET, KeySession, key_name
from mailfathom.domain.sender_verdict import (
    AuthenticatedBy,
    AuthorAuthentication,
    DmarcResult,
    SenderVerdict,
    VerdictSource,
)

MIN_RSA_KEY_BITS = 1024
"""RFC 8301 section 3.2: verifiers must not consider signatures using RSA keys of fewer
than 1024 bits valid."""


class SignatureOutcome(enum.Enum):
    PASS = "pass"  # noqa: S105 (a check outcome, not a secret)
    FAIL = "fail"
    UNRESOLVED = "unresolved"
    MALFORMED = "malformed"


@dataclass(frozen=True, slots=True)
class SignatureCheck:
    """One signature's outcome. `domain` is its d= in comparison form, None if it has none."""

    domain: str | None
    outcome: SignatureOutcome


def check_signatures(raw: bytes, session: KeySession, limit: int) -> list[SignatureCheck]:
    """The outcome of each of the first `limit` DKIM signatures, top first (the most
    recently added first, RFC 6376 section 5.4)."""
    try:
        verifier = dkim.DKIM(raw, logger=QUIET, minkey=MIN_RSA_KEY_BITS)
    except Exception:
        return []
    headers = [value for name, value in verifier.headers if name.lower() == b"dkim-signature"]
    return [_check(verifier, index, value, session) for index, value in enumerate(headers[:limit])]


def _check(verifier: dkim.DKIM, index: int, value: bytes, session: KeySession) -> SignatureCheck:
    try:
        tags = parse_tag_value(value)
    except InvalidTagValueList:
        return SignatureCheck(None, SignatureOutcome.MALFORMED)
    domain = comparison_domain(tags.get(b"d"))
    if domain is None:
        return SignatureCheck(None, SignatureOutcome.MALFORMED)
    name = key_name(tags.get(b"s", b""), tags.get(b"d", b""))
    try:
        verified = bool(verifier.verify(idx=index, dnsfunc=session.dnsfunc))
    except Exception:
        verified = False
    looked_up = session.outcome(name)
    if looked_up is not None and looked_up is not Outcome.FOUND:
        return SignatureCheck(domain, SignatureOutcome.UNRESOLVED)
    return SignatureCheck(domain, SignatureOutcome.PASS if verified else SignatureOutcome.FAIL)


def local_verdict(checks: list[SignatureCheck], author_domain: str | None) -> SenderVerdict:
    """An aligned pass authenticates the author; with none, an aligned signature that
    definitively failed fails it; anything else leaves it not established."""
    passed = [check.domain for check in checks if check.outcome is SignatureOutcome.PASS]
    aligned_passes = [domain for domain in passed if aligned(domain, author_domain)]
    if aligned_passes:
        conclusion = AuthorAuthentication.AUTHENTICATED
    elif any(
        check.outcome is SignatureOutcome.FAIL and aligned(check.domain, author_domain)
        for check in checks
    ):
        conclusion = AuthorAuthentication.FAILED
    else:
        conclusion = AuthorAuthentication.NOT_ESTABLISHED
    shown = (aligned_passes or passed or [None])[0]
    return SenderVerdict(
        author_authentication=conclusion,
        verdict_source=VerdictSource.LOCAL_VERIFICATION,
        authenticated_domain=shown,
        displayed_author_domain=author_domain,
        authenticated_by=AuthenticatedBy.DKIM if shown is not None else AuthenticatedBy.NONE,
        dmarc=DmarcResult.NOT_REPORTED,
    )
