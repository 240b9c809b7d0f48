"""Whether this deployment trusts the author a message displays.

The answer is derived when a message is read, from the verdict synchronization stored and
the configuration as it stands, so an operator who names or stops naming a sender sees the
change on the next read without mail being verified again. It is `trusted` only where the
author was authenticated: a forged From of a trusted sender reads `unknown`.
"""

from __future__ import annotations

from dataclasses import dataclass

from mailfathom.domain.sender_verdict import AuthorAuthentication, DeploymentTrust, SenderVerdict


def comparison_domain(domain: str | None) -> str | None:
    """A domain in the form verdicts are compared in: ASCII (IDNA), upper case, no final
    dot. None for text that is no domain."""
    if domain is None:
        return None
    name = domain.strip().rstrip(".")
    if not name:
        return None
    try:
        ascii_name = name.encode("idna").decode("ascii")
    except UnicodeError:
        return None
    return ascii_name.upper()


def address_domain(address: str | None) -> str | None:
    """The comparison form of an address's domain."""
    if not address or "@" not in address:
        return None
    return comparison_domain(address.rpartition("@")[2])


@dataclass(frozen=True, slots=True)
class SenderTrustPolicy:
    """`addresses` lower-cased (the operator's trusted senders and every served account's
    own addresses); `domains` in comparison form."""

    addresses: frozenset[str] = frozenset()
    domains: frozenset[str] = frozenset()

    @classmethod
    def of(
        cls, addresses: tuple[str, ...] | frozenset[str], domains: tuple[str, ...]
    ) -> SenderTrustPolicy:
        folded = {d for d in (comparison_domain(name) for name in domains) if d is not None}
        return cls(frozenset(a.lower() for a in addresses), frozenset(folded))

    def trust_of(self, verdict: SenderVerdict, sender_address: str | None) -> DeploymentTrust:
        """`trusted` when the authenticated author's domain is named, or its address is and
        is the author the verdict was reached about."""
        if verdict.author_authentication is not AuthorAuthentication.AUTHENTICATED:
            return DeploymentTrust.UNKNOWN
        author_domain = verdict.displayed_author_domain
        if author_domain is None:
            return DeploymentTrust.UNKNOWN
        if author_domain in self.domains:
            return DeploymentTrust.TRUSTED
        if (
            sender_address is not None
            and sender_address.lower() in self.addresses
            and address_domain(sender_address) == author_domain
        ):
            return DeploymentTrust.TRUSTED
        return DeploymentTrust.UNKNOWN


NO_TRUSTED_SENDERS = SenderTrustPolicy()
