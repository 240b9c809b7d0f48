"""The `[SenderTrust]` section: the senders and domains this deployment trusts.

A named author reads `trusted` only where its message's author was authenticated; the
served accounts' own addresses are trusted the same way without being listed here.
"""

from __future__ import annotations

from mailfathom.adapters.config.toml_tables import Table
from mailfathom.domain import text_rules
from mailfathom.domain.config import SenderTrustConfig
from mailfathom.domain.sender_trust import comparison_domain

_KEYS = frozenset({"TrustedSenders", "TrustedDomains"})
_ADDRESS_LIMIT = 254
_DOMAIN_LIMIT = 253


def _senders(table: Table) -> tuple[str, ...]:
    found: list[str] = []
    for index, address in enumerate(table.strings("TrustedSenders") or ()):
        local, at, domain = address.rpartition("@")
        if (
            not (at and local and domain)
            or len(address) > _ADDRESS_LIMIT
            or any(char.isspace() for char in address)
            or not text_rules.is_name(address)
        ):
            table.problems.add(
                f"{table.at('TrustedSenders')}[{index}]",
                f"must be an e-mail address (local@domain, at most {_ADDRESS_LIMIT} "
                "characters, no spaces)",
            )
            continue
        found.append(address.lower())
    return tuple(dict.fromkeys(found))


def _domains(table: Table) -> tuple[str, ...]:
    found: list[str] = []
    for index, domain in enumerate(table.strings("TrustedDomains") or ()):
        if (
            len(domain) > _DOMAIN_LIMIT
            or "@" in domain
            or any(char.isspace() for char in domain)
            or comparison_domain(domain) is None
        ):
            table.problems.add(
                f"{table.at('TrustedDomains')}[{index}]",
                f"must be a domain name (at most {_DOMAIN_LIMIT} characters, no @ or spaces)",
            )
            continue
        found.append(domain)
    return tuple(dict.fromkeys(found))


def parse_sender_trust(table: Table | None) -> SenderTrustConfig:
    if table is None:
        return SenderTrustConfig()
    table.refuse_unknown(_KEYS)
    return SenderTrustConfig(trusted_senders=_senders(table), trusted_domains=_domains(table))
