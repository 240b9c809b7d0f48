"""Who a message may reach: the deployment's recipient policy and the vouching rule.

The recipient policy refuses the whole message, never a part of it, so nobody receives a
message that was meant to reach somebody it could not. An unvouched address is one the caller
wrote out that nothing in this deployment holds a record of (its own addresses, and the
contact book); derived recipients (whoever a
reply answers) are never judged by that rule, because the answered message vouches for them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from mailfathom.domain.codes import Code
from mailfathom.domain.config import DeploymentConfig
from mailfathom.domain.delivery_config import RecipientPolicy, UnvouchedRecipients
from mailfathom.domain.errors import Refusal


def _covers(entry: str, address: str) -> bool:
    """An address entry covers that address; a domain entry covers the domain and its
    subdomains."""
    folded = address.lower()
    if "@" in entry:
        return folded == entry
    domain = folded.rpartition("@")[2]
    return domain == entry or domain.endswith("." + entry)


def admit(policy: RecipientPolicy, addresses: Iterable[str]) -> None:
    for address in addresses:
        if any(_covers(entry, address) for entry in policy.deny):
            raise Refusal(
                Code.RECIPIENT_NOT_ADMITTED,
                "A recipient is covered by a denied entry of MailDelivery.RecipientPolicy; "
                "the message was not written down.",
            )
        if policy.allow and not any(_covers(entry, address) for entry in policy.allow):
            raise Refusal(
                Code.RECIPIENT_NOT_ADMITTED,
                "A recipient is outside the allowed entries of MailDelivery.RecipientPolicy; "
                "the message was not written down.",
            )


def own_addresses(config: DeploymentConfig) -> frozenset[str]:
    """Every address the deployment's accounts receive or send as."""
    found: set[str] = set()
    for account in config.accounts:
        found.update(account.own_addresses())
    return frozenset(found)


class RecipientRecords(Protocol):
    """What else this deployment holds a record of, beyond its own addresses: the contact
    book, as `MailDelivery.VouchingContacts` says."""

    def vouched_keys(self, keys: frozenset[str]) -> frozenset[str]:
        """Which of these lower-cased addresses a record vouches for."""
        ...


def vouch(
    config: DeploymentConfig, written: Iterable[str], records: RecipientRecords | None
) -> None:
    """Refuse (53009) an address the caller wrote out that nothing here holds a record of,
    when the deployment says so. The refusal names neither the address nor a count."""
    if config.mail_delivery.unvouched_recipients is not UnvouchedRecipients.REFUSE:
        return
    unknown = frozenset(a.lower() for a in written) - own_addresses(config)
    if unknown and (records is None or records.vouched_keys(unknown) != unknown):
        raise Refusal(
            Code.RECIPIENT_NOT_VOUCHED,
            "A recipient is an address nothing in this deployment vouches for, and it refuses "
            "such addresses (MailDelivery.UnvouchedRecipients = Refuse); a contact a caller "
            "wrote does not vouch.",
        )
