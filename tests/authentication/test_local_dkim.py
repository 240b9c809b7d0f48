"""Local DKIM verification against keys published by a real DNS server on loopback.

Every message is signed here by a key the test generates, and its key is served by
`servers.dns.DnsServer` over UDP and TCP, so the lookups are the ones a deployment makes.
"""

from __future__ import annotations

import pytest

from authentication.helpers import (
    NO_TRUST,
    SigningKey,
    ed25519_key,
    engine,
    key_name,
    message,
    rsa_key,
    sign,
)
from mailfathom.adapters.authentication.local_dkim import SignatureOutcome
from mailfathom.domain.sender_verdict import (
    AuthenticatedBy,
    AuthorAuthentication,
    DmarcResult,
    VerdictSource,
)
from servers.dns import DnsServer


@pytest.fixture(scope="module")
def rsa() -> SigningKey:
    return rsa_key()


@pytest.fixture(scope="module")
def other_rsa() -> SigningKey:
    return rsa_key()


@pytest.fixture(scope="module")
def ed25519() -> SigningKey:
    return ed25519_key()


@pytest.mark.parametrize("key_kind", ["rsa", "ed25519"])
def test_an_aligned_signature_that_verifies_authenticates_the_author(
    dns_server: DnsServer, key_kind: str, rsa: SigningKey, ed25519: SigningKey
) -> None:
    key = rsa if key_kind == "rsa" else ed25519
    dns_server.publish(key_name("s1", "mail.author.example"), key.record)
    raw = sign(message(), key, domain="mail.author.example", selector="s1")

    verdict = engine(dns_server).verify(raw, headers_only=False, trusted_authserv_ids=NO_TRUST)

    assert verdict.author_authentication is AuthorAuthentication.AUTHENTICATED
    assert verdict.verdict_source is VerdictSource.LOCAL_VERIFICATION
    assert verdict.authenticated_by is AuthenticatedBy.DKIM
    assert verdict.authenticated_domain == "MAIL.AUTHOR.EXAMPLE"
    assert verdict.displayed_author_domain == "AUTHOR.EXAMPLE"
    assert verdict.dmarc is DmarcResult.NOT_REPORTED
    assert dns_server.questions(key_name("s1", "mail.author.example")) >= 1


def test_a_key_longer_than_a_udp_answer_is_fetched_over_tcp(dns_server: DnsServer) -> None:
    key = rsa_key(4096)
    dns_server.publish(key_name("big", "author.example"), key.record)
    raw = sign(message(), key, domain="author.example", selector="big")

    verdict = engine(dns_server).verify(raw, headers_only=False, trusted_authserv_ids=NO_TRUST)

    assert verdict.author_authentication is AuthorAuthentication.AUTHENTICATED


def test_a_tampered_body_fails(dns_server: DnsServer, rsa: SigningKey) -> None:
    dns_server.publish(key_name("s1", "author.example"), rsa.record)
    raw = sign(message(), rsa, domain="author.example", selector="s1")
    tampered = raw.replace(b"Hello there.", b"Pay invoice 7.")

    examination = engine(dns_server).examine(
        tampered, headers_only=False, trusted_authserv_ids=NO_TRUST
    )

    assert examination.verdict.author_authentication is AuthorAuthentication.FAILED
    assert examination.verdict.verdict_source is VerdictSource.LOCAL_VERIFICATION
    assert examination.verdict.authenticated_domain is None
    assert examination.verdict.authenticated_by is AuthenticatedBy.NONE
    assert [check.outcome for check in examination.signatures] == [SignatureOutcome.FAIL]


def test_a_signature_made_with_another_key_than_the_published_one_fails(
    dns_server: DnsServer, rsa: SigningKey, other_rsa: SigningKey
) -> None:
    dns_server.publish(key_name("s1", "author.example"), other_rsa.record)
    raw = sign(message(), rsa, domain="author.example", selector="s1")

    verdict = engine(dns_server).verify(raw, headers_only=False, trusted_authserv_ids=NO_TRUST)

    assert verdict.author_authentication is AuthorAuthentication.FAILED


def test_a_valid_signature_of_another_domain_under_a_spoofed_from_is_not_aligned(
    dns_server: DnsServer, rsa: SigningKey
) -> None:
    dns_server.publish(key_name("s1", "attacker.example"), rsa.record)
    raw = sign(
        message(author="Payroll <payroll@victim.example>"),
        rsa,
        domain="attacker.example",
        selector="s1",
    )

    examination = engine(dns_server).examine(raw, headers_only=False, trusted_authserv_ids=NO_TRUST)

    verdict = examination.verdict
    assert [check.outcome for check in examination.signatures] == [SignatureOutcome.PASS]
    assert verdict.author_authentication is AuthorAuthentication.NOT_ESTABLISHED
    assert verdict.authenticated_domain == "ATTACKER.EXAMPLE"
    assert verdict.authenticated_by is AuthenticatedBy.DKIM
    assert verdict.displayed_author_domain == "VICTIM.EXAMPLE"


def test_a_lookalike_organizational_domain_is_not_aligned(
    dns_server: DnsServer, rsa: SigningKey
) -> None:
    dns_server.publish(key_name("s1", "author.example.co.uk"), rsa.record)
    raw = sign(
        message(author="alice@author.co.uk"), rsa, domain="author.example.co.uk", selector="s1"
    )

    verdict = engine(dns_server).verify(raw, headers_only=False, trusted_authserv_ids=NO_TRUST)

    assert verdict.author_authentication is AuthorAuthentication.NOT_ESTABLISHED


def test_a_key_the_name_server_says_does_not_exist_is_not_established(
    dns_server: DnsServer, rsa: SigningKey
) -> None:
    raw = sign(message(), rsa, domain="author.example", selector="gone")

    examination = engine(dns_server).examine(raw, headers_only=False, trusted_authserv_ids=NO_TRUST)

    assert examination.verdict.author_authentication is AuthorAuthentication.NOT_ESTABLISHED
    assert examination.verdict.verdict_source is VerdictSource.LOCAL_VERIFICATION
    assert [check.outcome for check in examination.signatures] == [SignatureOutcome.UNRESOLVED]
    assert dns_server.questions(key_name("gone", "author.example")) >= 1


def test_a_key_whose_server_fails_is_not_established(
    dns_server: DnsServer, rsa: SigningKey
) -> None:
    dns_server.fail(key_name("s1", "author.example"))
    raw = sign(message(), rsa, domain="author.example", selector="s1")

    verdict = engine(dns_server).verify(raw, headers_only=False, trusted_authserv_ids=NO_TRUST)

    assert verdict.author_authentication is AuthorAuthentication.NOT_ESTABLISHED


def test_a_name_server_that_never_answers_leaves_the_author_not_established_within_the_budget(
    dns_server: DnsServer, rsa: SigningKey
) -> None:
    """Three signatures, a lookup deadline of 0.3 s and a budget of 0.5 s: the first lookup
    spends its deadline, the second the rest of the budget, and the third is never asked."""
    raw = message()
    for selector in ("one", "two", "three"):
        raw = sign(raw, rsa, domain="author.example", selector=selector)
    dns_server.set_silent(True)

    examination = engine(dns_server, lookup_timeout=0.3, budget=0.5).examine(
        raw, headers_only=False, trusted_authserv_ids=NO_TRUST
    )

    assert examination.verdict.author_authentication is AuthorAuthentication.NOT_ESTABLISHED
    assert {check.outcome for check in examination.signatures} == {SignatureOutcome.UNRESOLVED}
    assert dns_server.questions(key_name("three", "author.example")) >= 1
    assert dns_server.questions(key_name("one", "author.example")) == 0


def test_signatures_past_the_bound_are_not_verified(dns_server: DnsServer, rsa: SigningKey) -> None:
    """Signatures are checked top first; the aligned one was added first, so it is the
    bottom one, sixth from the top, past a bound of five."""
    dns_server.publish(key_name("own", "author.example"), rsa.record)
    raw = sign(message(), rsa, domain="author.example", selector="own")
    for index in range(5):
        dns_server.publish(key_name(f"relay{index}", "relay.example"), rsa.record)
        raw = sign(raw, rsa, domain="relay.example", selector=f"relay{index}")

    bounded = engine(dns_server, max_signatures=5).examine(
        raw, headers_only=False, trusted_authserv_ids=NO_TRUST
    )
    wider = engine(dns_server, max_signatures=6).verify(
        raw, headers_only=False, trusted_authserv_ids=NO_TRUST
    )

    assert len(bounded.signatures) == 5
    assert bounded.verdict.author_authentication is AuthorAuthentication.NOT_ESTABLISHED
    assert bounded.verdict.authenticated_domain == "RELAY.EXAMPLE"
    assert dns_server.questions(key_name("own", "author.example")) == 1
    assert wider.author_authentication is AuthorAuthentication.AUTHENTICATED


def test_an_aligned_pass_wins_over_an_aligned_failure(
    dns_server: DnsServer, rsa: SigningKey, other_rsa: SigningKey
) -> None:
    dns_server.publish(key_name("good", "author.example"), rsa.record)
    dns_server.publish(key_name("rotated", "author.example"), other_rsa.record)
    raw = sign(message(), rsa, domain="author.example", selector="good")
    raw = sign(raw, rsa, domain="author.example", selector="rotated")

    verdict = engine(dns_server).verify(raw, headers_only=False, trusted_authserv_ids=NO_TRUST)

    assert verdict.author_authentication is AuthorAuthentication.AUTHENTICATED


def test_a_header_block_alone_is_never_verified_locally(
    dns_server: DnsServer, rsa: SigningKey
) -> None:
    dns_server.publish(key_name("s1", "author.example"), rsa.record)
    raw = sign(message(), rsa, domain="author.example", selector="s1")
    headers = raw.split(b"\r\n\r\n", 1)[0] + b"\r\n\r\n"

    verdict = engine(dns_server).verify(headers, headers_only=True, trusted_authserv_ids=NO_TRUST)

    assert verdict.author_authentication is AuthorAuthentication.NOT_ESTABLISHED
    assert verdict.verdict_source is VerdictSource.RECEIVING_SERVER
    assert verdict.displayed_author_domain == "AUTHOR.EXAMPLE"
    assert dns_server.questions() == 0


def test_an_unsigned_message_without_a_trusted_header_is_the_receiving_servers_answer(
    dns_server: DnsServer,
) -> None:
    verdict = engine(dns_server).verify(
        message(), headers_only=False, trusted_authserv_ids=frozenset({"mx.example.net"})
    )

    assert verdict.author_authentication is AuthorAuthentication.NOT_ESTABLISHED
    assert verdict.verdict_source is VerdictSource.RECEIVING_SERVER
    assert verdict.authenticated_by is AuthenticatedBy.NONE
    assert dns_server.questions() == 0
