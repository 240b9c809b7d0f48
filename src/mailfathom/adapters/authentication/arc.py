"""The message's ARC chain (RFC 8617), validated with dkimpy, as evidence beside a verdict.

A chain that validates says that each intermediary which sealed it saw what its
ARC-Authentication-Results say, and that nothing changed since the last seal. It does not
say the author is who the From field displays: the statements inside a seal are only as good
as the trust placed in the sealer, and this deployment has no configuration naming sealers
it trusts. So the chain is recorded as evidence and never used to authenticate the author;
the verdict comes from a trusted receiving server or from the author's own DKIM signatures.
"""

from __future__ import annotations

import enum

import dkim

from mailfathom.adapters.authentication.key_session import QUIET, KeySession
from mailfathom.adapters.authentication.local_dkim import MIN_RSA_KEY_BITS


class ArcChain(enum.Enum):
    """RFC 8617 section 5.2's chain validation status, plus the two readings a chain has
    where that status does not apply."""

    PASS = "pass"  # noqa: S105 (a check outcome, not a secret)
    FAIL = "fail"
    NONE = "none"
    """The message carries no ARC set."""
    ENDED = "ended"
    """A seal records that the chain had already failed when it was sealed (cv=fail): the
    chain ended there, and nothing after it is evaluated (section 5.1.2)."""
    NOT_ESTABLISHED = "notEstablished"
    """The chain did not validate, and a lookup of a key it needed had no answer (a timeout,
    SERVFAIL, or the budget spent), so the failure may be the lookup rather than the chain.
    A name server's answer that no key exists is a failure of the chain, as RFC 8617 section
    5.2 reads RFC 6376's: unlike the author verdict, this evidence follows the protocol
    exactly, because nothing is concluded from it."""


def validate_chain(raw: bytes, session: KeySession) -> ArcChain:
    mark = session.lookups()
    try:
        status, _, _ = dkim.ARC(raw, logger=QUIET, minkey=MIN_RSA_KEY_BITS).verify(
            dnsfunc=session.dnsfunc
        )
    except Exception:
        status = dkim.CV_Fail
    if status == dkim.CV_Pass:
        return ArcChain.PASS
    if status == dkim.CV_None:
        return ArcChain.NONE
    if status is None:
        return ArcChain.ENDED
    if session.unavailable_since(mark):
        return ArcChain.NOT_ESTABLISHED
    return ArcChain.FAIL
