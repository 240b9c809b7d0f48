"""dkimpy's test data through the engine, its keys published on the loopback DNS server.

Messages the data ships unsigned are signed here with the data's private keys; messages it
ships signed are verified as they are. A key the data does not carry (gmail.com's, for one)
is not published, so that signature is unresolved and never a failure.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from authentication.helpers import NO_TRUST, SigningKey, engine, key_name, sign
from mailfathom.adapters.authentication.local_dkim import SignatureOutcome
from mailfathom.domain.sender_verdict import AuthorAuthentication
from servers.dns import DnsServer

AUTHENTICATED = AuthorAuthentication.AUTHENTICATED
FAILED = AuthorAuthentication.FAILED
NOT_ESTABLISHED = AuthorAuthentication.NOT_ESTABLISHED


def data(corpora: Path, name: str) -> bytes:
    return (corpora / "dkim" / "dkimpy" / name).read_bytes()


@pytest.mark.parametrize(
    ("private", "algorithm", "record", "expected"),
    [
        ("test.private", b"rsa-sha256", "test.txt", AUTHENTICATED),
        ("test.private", b"rsa-sha256", "test2.txt", AUTHENTICATED),
        ("test.private", b"rsa-sha256", "badversion.txt", FAILED),
        ("test.private", b"rsa-sha256", "badk.txt", FAILED),
        ("test.private", b"rsa-sha256", "test_bad.txt", FAILED),
        ("test.private", b"rsa-sha256", "test_tlsrpt.txt", FAILED),
        ("test2.private", b"rsa-sha256", "test.txt", AUTHENTICATED),
        ("1024_testkey.key", b"rsa-sha256", "1024_testkey_wo_markers.pub.txt", AUTHENTICATED),
        ("2048_testkey.key", b"rsa-sha256", "2048_testkey_wo_markers.pub.txt", AUTHENTICATED),
        ("2048_testkey_PKCS8.key", b"rsa-sha256", "2048_testkey_PKCS8.key.pub.txt", AUTHENTICATED),
        ("1024_testkey.key", b"rsa-sha256", "test.txt", FAILED),
        ("ed25519test.key", b"ed25519-sha256", "ed25519test.dns", AUTHENTICATED),
    ],
)
@pytest.mark.parametrize("message", ["test.message", "test_extra.message", "rfc6376.w1258.msg"])
def test_a_message_signed_with_a_data_key_reaches_the_records_outcome(
    corpora: Path,
    dns_server: DnsServer,
    message: str,
    private: str,
    algorithm: bytes,
    record: str,
    expected: AuthorAuthentication,
) -> None:
    raw = data(corpora, message)
    domain = "example.com" if message != "rfc6376.w1258.msg" else "football.example.com"
    key = SigningKey(algorithm, data(corpora, private).strip(), "")
    dns_server.publish(key_name("test", domain), data(corpora, record).decode().strip())

    verdict = engine(dns_server).verify(
        sign(raw, key, domain=domain, selector="test"),
        headers_only=False,
        trusted_authserv_ids=NO_TRUST,
    )

    assert verdict.author_authentication is expected


def test_an_altered_body_fails(corpora: Path, dns_server: DnsServer) -> None:
    dns_server.publish(key_name("test", "example.com"), data(corpora, "test.txt").decode())
    key = SigningKey(b"rsa-sha256", data(corpora, "test.private"), "")
    raw = sign(data(corpora, "test.message"), key, domain="example.com", selector="test")

    verdict = engine(dns_server).verify(
        raw + b"foo", headers_only=False, trusted_authserv_ids=NO_TRUST
    )

    assert verdict.author_authentication is FAILED


@pytest.mark.parametrize(
    ("message", "records", "expected", "outcomes"),
    [
        (
            "rfc6376.signed.msg",
            {
                "brisbane": "ed25519:11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=",
                "test": "test.txt",
            },
            AUTHENTICATED,
            [SignatureOutcome.PASS, SignatureOutcome.PASS],
        ),
        ("rfc6376.signed.rsa.msg", {"test": "test.txt"}, AUTHENTICATED, [SignatureOutcome.PASS]),
        ("rfc6376.signed.rsa.msg", {"test": "test_bad.txt"}, FAILED, [SignatureOutcome.FAIL]),
        ("rfc6376.signed.msg", {}, NOT_ESTABLISHED, [SignatureOutcome.UNRESOLVED] * 2),
        ("test.message.baddomain", {}, NOT_ESTABLISHED, [SignatureOutcome.MALFORMED]),
        ("test2.message", {}, NOT_ESTABLISHED, [SignatureOutcome.UNRESOLVED]),
        ("message.mbox", {}, NOT_ESTABLISHED, [SignatureOutcome.UNRESOLVED]),
        ("test_nofrom.message", {}, NOT_ESTABLISHED, []),
    ],
)
def test_a_message_the_data_ships_signed_reaches_its_outcome(
    corpora: Path,
    dns_server: DnsServer,
    message: str,
    records: dict[str, str],
    expected: AuthorAuthentication,
    outcomes: list[SignatureOutcome],
) -> None:
    for selector, source in records.items():
        text = (
            f"v=DKIM1; k=ed25519; p={source.split(':', 1)[1]}"
            if source.startswith("ed25519:")
            else data(corpora, source).decode().strip()
        )
        dns_server.publish(key_name(selector, "football.example.com"), text)

    examination = engine(dns_server).examine(
        data(corpora, message), headers_only=False, trusted_authserv_ids=NO_TRUST
    )

    assert examination.verdict.author_authentication is expected
    assert [check.outcome for check in examination.signatures] == outcomes


def test_an_exim_ed25519_signature_verifies_but_is_not_aligned(
    corpora: Path, dns_server: DnsServer
) -> None:
    dns_server.publish(key_name("sed", "test.ex"), data(corpora, "eximtest.dns").decode().strip())

    examination = engine(dns_server).examine(
        data(corpora, "ed25519test2.msg"), headers_only=False, trusted_authserv_ids=NO_TRUST
    )

    assert [check.outcome for check in examination.signatures] == [SignatureOutcome.PASS]
    assert examination.verdict.author_authentication is NOT_ESTABLISHED
    assert examination.verdict.authenticated_domain == "TEST.EX"
