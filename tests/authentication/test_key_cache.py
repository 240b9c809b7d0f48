"""The key cache, counted at the DNS server: answers are reused for their (capped) TTL, and an
answer that no key exists is reused for the negative-caching period."""

from __future__ import annotations

from authentication.helpers import NO_TRUST, engine, key_name, message, rsa_key, sign
from mailfathom.domain.sender_verdict import AuthorAuthentication
from servers.dns import DnsServer


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_second_message_signed_by_the_same_selector_costs_no_query(
    dns_server: DnsServer,
) -> None:
    key = rsa_key()
    dns_server.publish(key_name("s1", "author.example"), key.record)
    verifier = engine(dns_server)
    first = sign(message(body="One.\r\n"), key, domain="author.example", selector="s1")
    second = sign(message(body="Two.\r\n"), key, domain="author.example", selector="s1")

    verdicts = [
        verifier.verify(raw, headers_only=False, trusted_authserv_ids=NO_TRUST)
        for raw in (first, second)
    ]

    assert {v.author_authentication for v in verdicts} == {AuthorAuthentication.AUTHENTICATED}
    assert dns_server.questions(key_name("s1", "author.example")) == 1


def test_an_answer_is_kept_no_longer_than_the_configured_ceiling(dns_server: DnsServer) -> None:
    key = rsa_key()
    dns_server.publish(key_name("s1", "author.example"), key.record, ttl=86400)
    clock = Clock()
    verifier = engine(dns_server, max_ttl=60.0, clock=clock)
    raw = sign(message(), key, domain="author.example", selector="s1")

    verifier.verify(raw, headers_only=False, trusted_authserv_ids=NO_TRUST)
    clock.now += 59
    verifier.verify(raw, headers_only=False, trusted_authserv_ids=NO_TRUST)
    asked_within = dns_server.questions()
    clock.now += 2
    verifier.verify(raw, headers_only=False, trusted_authserv_ids=NO_TRUST)

    assert asked_within == 1
    assert dns_server.questions() == 2


def test_an_answer_is_kept_no_longer_than_its_own_ttl(dns_server: DnsServer) -> None:
    key = rsa_key()
    dns_server.publish(key_name("s1", "author.example"), key.record, ttl=10)
    clock = Clock()
    verifier = engine(dns_server, max_ttl=3600.0, clock=clock)
    raw = sign(message(), key, domain="author.example", selector="s1")

    verifier.verify(raw, headers_only=False, trusted_authserv_ids=NO_TRUST)
    clock.now += 11
    verifier.verify(raw, headers_only=False, trusted_authserv_ids=NO_TRUST)

    assert dns_server.questions() == 2


def test_an_absent_key_is_remembered_for_the_negative_caching_period(
    dns_server: DnsServer,
) -> None:
    key = rsa_key()
    clock = Clock()
    verifier = engine(dns_server, negative=30.0, clock=clock)
    raw = sign(message(), key, domain="author.example", selector="late")

    verdicts = [verifier.verify(raw, headers_only=False, trusted_authserv_ids=NO_TRUST)]
    dns_server.publish(key_name("late", "author.example"), key.record)
    clock.now += 29
    verdicts.append(verifier.verify(raw, headers_only=False, trusted_authserv_ids=NO_TRUST))
    asked_within = dns_server.questions()
    clock.now += 2
    verdicts.append(verifier.verify(raw, headers_only=False, trusted_authserv_ids=NO_TRUST))

    assert asked_within == 1
    assert [v.author_authentication for v in verdicts] == [
        AuthorAuthentication.NOT_ESTABLISHED,
        AuthorAuthentication.NOT_ESTABLISHED,
        AuthorAuthentication.AUTHENTICATED,
    ]


def test_a_failed_lookup_is_not_remembered(dns_server: DnsServer) -> None:
    key = rsa_key()
    dns_server.fail(key_name("s1", "author.example"))
    verifier = engine(dns_server)
    raw = sign(message(), key, domain="author.example", selector="s1")

    verifier.verify(raw, headers_only=False, trusted_authserv_ids=NO_TRUST)
    verifier.verify(raw, headers_only=False, trusted_authserv_ids=NO_TRUST)

    assert dns_server.questions(key_name("s1", "author.example")) == 2
