"""The `[SenderVerification]` section and an account's `TrustedAuthservIds`.

Every number is bounded on both sides: a lookup deadline of zero would make every key
unresolvable, and one of minutes would let one silent name server stall synchronization; a
cache without a ceiling grows with every sender ever seen.
"""

from __future__ import annotations

import ipaddress
import re

from mailfathom.adapters.config.toml_tables import Table
from mailfathom.domain import text_rules
from mailfathom.domain.config import SenderVerificationConfig

_KEYS = frozenset(
    {
        "Enabled",
        "Resolver",
        "LookupTimeoutSeconds",
        "MessageBudgetSeconds",
        "MaxSignatures",
        "CacheEntries",
        "MaxCacheTtlSeconds",
        "NegativeCacheSeconds",
    }
)
_SECONDS_BOUNDS = {
    "LookupTimeoutSeconds": (0.05, 30.0),
    "MessageBudgetSeconds": (0.1, 120.0),
    "MaxCacheTtlSeconds": (0.0, 86400.0),
    "NegativeCacheSeconds": (0.0, 86400.0),
}
_COUNT_BOUNDS = {"MaxSignatures": (1, 20), "CacheEntries": (0, 1_000_000)}
_DNS_PORT = 53
_BRACKETED = re.compile(r"\[([^\]]+)\](?::([0-9]{1,5}))?")
_RESOLVER_RULE = (
    'must be an IP address with an optional port, such as "192.0.2.53", "192.0.2.53:5353" '
    'or "[2001:db8::53]:5353"'
)
MAX_TRUSTED_IDS = 16
_AUTHSERV_ID_LIMIT = 253


def parse_sender_verification(table: Table | None) -> SenderVerificationConfig:
    defaults = SenderVerificationConfig()
    if table is None:
        return defaults
    table.refuse_unknown(_KEYS)
    seconds = {
        key: _bounded_number(table, key, low, high, getattr(defaults, _field(key)))
        for key, (low, high) in _SECONDS_BOUNDS.items()
    }
    counts = {
        key: _bounded_count(table, key, low, high, getattr(defaults, _field(key)))
        for key, (low, high) in _COUNT_BOUNDS.items()
    }
    return SenderVerificationConfig(
        enabled=table.boolean("Enabled", defaults.enabled),
        resolver=_parse_resolver(table),
        lookup_timeout_seconds=seconds["LookupTimeoutSeconds"],
        message_budget_seconds=seconds["MessageBudgetSeconds"],
        max_signatures=counts["MaxSignatures"],
        cache_entries=counts["CacheEntries"],
        max_cache_ttl_seconds=seconds["MaxCacheTtlSeconds"],
        negative_cache_seconds=seconds["NegativeCacheSeconds"],
    )


def _field(key: str) -> str:
    return {
        "LookupTimeoutSeconds": "lookup_timeout_seconds",
        "MessageBudgetSeconds": "message_budget_seconds",
        "MaxCacheTtlSeconds": "max_cache_ttl_seconds",
        "NegativeCacheSeconds": "negative_cache_seconds",
        "MaxSignatures": "max_signatures",
        "CacheEntries": "cache_entries",
    }[key]


def _bounded_number(table: Table, key: str, low: float, high: float, default: float) -> float:
    value = table.number(key)
    if value is None:
        return default
    if not low <= value <= high:
        table.problems.add(table.at(key), f"must be from {low:g} to {high:g} seconds")
        return default
    return value


def _bounded_count(table: Table, key: str, low: int, high: int, default: int) -> int:
    value = table.integer(key)
    if value is None:
        return default
    if not low <= value <= high:
        table.problems.add(table.at(key), f"must be from {low} to {high}")
        return default
    return value


def _parse_resolver(table: Table) -> tuple[str, int] | None:
    text = table.string("Resolver")
    if text is None:
        return None
    parsed = _address_and_port(text.strip())
    if parsed is None:
        table.problems.add(table.at("Resolver"), _RESOLVER_RULE)
    return parsed


def _address_and_port(text: str) -> tuple[str, int] | None:
    bracketed = _BRACKETED.fullmatch(text)
    if bracketed:
        host, port_text = bracketed.group(1), bracketed.group(2)
    elif text.count(":") == 1:
        host, port_text = text.split(":")
    else:
        host, port_text = text, None
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return None
    if bracketed is None and port_text is None and ":" in host and address.version == 4:
        return None
    port = _DNS_PORT if port_text is None else int(port_text) if port_text.isdigit() else 0
    if not 1 <= port <= 65535:
        return None
    return str(address), port


def parse_trusted_authserv_ids(table: Table) -> frozenset[str] | None:
    """An account's trusted authserv-ids, folded to lower case (RFC 8601 section 2.5 compares
    them without regard to case); None when a value breaks a rule."""
    key = "TrustedAuthservIds"
    values = table.strings(key)
    if values is None:
        return None if table.has(key) else frozenset()
    if len(values) > MAX_TRUSTED_IDS:
        table.problems.add(table.at(key), f"must list at most {MAX_TRUSTED_IDS} ids")
        return None
    ok = True
    for index, value in enumerate(values):
        if not is_authserv_id(value):
            table.problems.add(f"{table.at(key)}[{index}]", AUTHSERV_ID_RULE)
            ok = False
    return frozenset(value.casefold() for value in values) if ok else None


AUTHSERV_ID_RULE = (
    f"must be an authserv-id: 1 to {_AUTHSERV_ID_LIMIT} characters, no spaces, "
    "semicolons, parentheses or quotes"
)


def is_authserv_id(value: str) -> bool:
    """Whether `value` can stand as an authserv-id unquoted (RFC 8601 section 2.2)."""
    return (
        0 < len(value) <= _AUTHSERV_ID_LIMIT
        and not any(char.isspace() or char in ';()"' for char in value)
        and text_rules.is_name(value)
    )
