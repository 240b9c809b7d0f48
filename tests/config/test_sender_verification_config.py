"""The [SenderVerification] section and an account's TrustedAuthservIds."""

from __future__ import annotations

from typing import Any

import pytest

from config.test_config_loading import imap_account, parse, problems_of
from mailfathom.adapters.authentication.engine import build_sender_verifier
from mailfathom.domain.config import SenderVerificationConfig


def with_section(**section: Any) -> dict[str, Any]:
    return {"Accounts": [imap_account()], "SenderVerification": section}


def test_defaults_verify_through_the_system_resolver_and_trust_no_server() -> None:
    config = parse({"Accounts": [imap_account()]})

    assert config.sender_verification == SenderVerificationConfig()
    assert config.sender_verification.enabled
    assert config.sender_verification.resolver is None
    assert config.accounts[0].trusted_authserv_ids == frozenset()


def test_every_key_is_read() -> None:
    config = parse(
        with_section(
            Enabled=False,
            Resolver="127.0.0.1:5353",
            LookupTimeoutSeconds=0.5,
            MessageBudgetSeconds=3,
            MaxSignatures=8,
            CacheEntries=50,
            MaxCacheTtlSeconds=600,
            NegativeCacheSeconds=20,
        )
    )

    assert config.sender_verification == SenderVerificationConfig(
        enabled=False,
        resolver=("127.0.0.1", 5353),
        lookup_timeout_seconds=0.5,
        message_budget_seconds=3.0,
        max_signatures=8,
        cache_entries=50,
        max_cache_ttl_seconds=600.0,
        negative_cache_seconds=20.0,
    )
    assert build_sender_verifier(config.sender_verification) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("192.0.2.53", ("192.0.2.53", 53)),
        ("[2001:db8::53]:5353", ("2001:db8::53", 5353)),
        ("2001:db8::53", ("2001:db8::53", 53)),
    ],
)
def test_a_resolver_address_takes_an_optional_port(text: str, expected: tuple[str, int]) -> None:
    assert parse(with_section(Resolver=text)).sender_verification.resolver == expected


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("Resolver", "dns.example.net"),
        ("Resolver", "127.0.0.1:0"),
        ("Resolver", "127.0.0.1:70000"),
        ("LookupTimeoutSeconds", 0),
        ("LookupTimeoutSeconds", 31),
        ("MessageBudgetSeconds", 0.01),
        ("MessageBudgetSeconds", 121),
        ("MaxSignatures", 0),
        ("MaxSignatures", 21),
        ("CacheEntries", -1),
        ("CacheEntries", 1_000_001),
        ("MaxCacheTtlSeconds", 86401),
        ("NegativeCacheSeconds", -1),
        ("MaxSignatures", "5"),
        ("Enabled", "yes"),
    ],
)
def test_a_value_out_of_range_is_refused_naming_its_key(key: str, value: Any) -> None:
    problems = problems_of(with_section(**{key: value}))

    assert len(problems) == 1
    assert problems[0].startswith(f"SenderVerification.{key}:")


def test_an_unknown_key_is_refused() -> None:
    assert problems_of(with_section(Resolvers="127.0.0.1"))[0].startswith(
        "SenderVerification.Resolvers: unknown key"
    )


def test_trusted_authserv_ids_are_kept_in_lower_case() -> None:
    document = {
        "Accounts": [imap_account(TrustedAuthservIds=["MX.Example.ORG", "mx2.example.org"])]
    }

    ids = parse(document).accounts[0].trusted_authserv_ids

    assert ids == frozenset({"mx.example.org", "mx2.example.org"})


@pytest.mark.parametrize(
    "ids", [["mx.example.org; dkim=pass"], [""], ["mx example"], ["a"] * 17, "mx.example.org"]
)
def test_an_authserv_id_that_could_not_be_one_is_refused(ids: Any) -> None:
    problems = problems_of({"Accounts": [imap_account(TrustedAuthservIds=ids)]})

    assert any(problem.startswith("Accounts[0].TrustedAuthservIds") for problem in problems)
