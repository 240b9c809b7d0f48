"""mailauth's DKIM fixtures with the keys they carry, published on the loopback DNS server.

The fixture folder carries DNS records in one place only, `dkim/ec/fixtures/dns.json`, for
the two signatures of `signed.eml`; beside it are mailauth's own test key pairs. None of it is
a key of the providers that sealed mailauth's ARC messages (google.com, zonevs.eu, ekiri.ee),
so those stay as `test_arc_corpus` shows them.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519, rsa

from authentication.helpers import NO_TRUST, SigningKey, engine, key_name, message, sign
from mailfathom.adapters.authentication.local_dkim import SignatureOutcome
from mailfathom.domain.sender_verdict import AuthorAuthentication
from servers.dns import DnsServer


def _folder(corpora: Path) -> Path:
    return corpora / "dkim" / "mailauth" / "test"


def test_the_ec_fixture_verifies_against_its_own_records(
    corpora: Path, dns_server: DnsServer
) -> None:
    """mailauth expects both signatures (ed25519 and RSA, relaxed) to pass."""
    fixtures = _folder(corpora) / "dkim" / "ec" / "fixtures"
    records = json.loads((fixtures / "dns.json").read_text())
    for name, types in records.items():
        if name.endswith("._domainkey.football.example.com"):
            dns_server.publish(name, "".join(types["TXT"][0]))

    examination = engine(dns_server).examine(
        (fixtures / "signed.eml").read_bytes(), headers_only=False, trusted_authserv_ids=NO_TRUST
    )

    assert [check.outcome for check in examination.signatures] == [SignatureOutcome.PASS] * 2
    assert examination.verdict.author_authentication is AuthorAuthentication.AUTHENTICATED
    assert examination.verdict.authenticated_domain == "FOOTBALL.EXAMPLE.COM"


def _key_pair(corpora: Path, name: str) -> SigningKey:
    fixtures = _folder(corpora) / "fixtures"
    private = serialization.load_pem_private_key(
        (fixtures / f"private-{name}.pem").read_bytes(), password=None
    )
    public = serialization.load_pem_public_key((fixtures / f"public-{name}.pem").read_bytes())
    if isinstance(private, ed25519.Ed25519PrivateKey):
        assert isinstance(public, ed25519.Ed25519PublicKey)
        raw = serialization.Encoding.Raw
        seed = private.private_bytes(
            raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
        )
        point = public.public_bytes(raw, serialization.PublicFormat.Raw)
        return SigningKey(
            b"ed25519-sha256",
            base64.b64encode(seed),
            f"v=DKIM1; k=ed25519; p={base64.b64encode(point).decode()}",
        )
    assert isinstance(private, rsa.RSAPrivateKey)
    der = public.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return SigningKey(
        b"rsa-sha256",
        (fixtures / f"private-{name}.pem").read_bytes(),
        f"v=DKIM1; k=rsa; p={base64.b64encode(der).decode()}",
    )


@pytest.mark.parametrize(
    ("name", "outcome", "expected"),
    [
        ("rsa", SignatureOutcome.PASS, AuthorAuthentication.AUTHENTICATED),
        ("ed25519", SignatureOutcome.PASS, AuthorAuthentication.AUTHENTICATED),
        ("small", SignatureOutcome.FAIL, AuthorAuthentication.FAILED),
    ],
)
def test_a_message_signed_with_a_fixture_key_pair_reaches_its_outcome(
    corpora: Path,
    dns_server: DnsServer,
    name: str,
    outcome: SignatureOutcome,
    expected: AuthorAuthentication,
) -> None:
    """The 512-bit pair is the weak key mailauth's own suite reports as such; RFC 8301
    section 3.2 forbids treating its signature as valid, so it fails."""
    key = _key_pair(corpora, name)
    dns_server.publish(key_name("test", "author.example"), key.record)

    examination = engine(dns_server).examine(
        sign(message(), key, domain="author.example", selector="test"),
        headers_only=False,
        trusted_authserv_ids=NO_TRUST,
    )

    assert [check.outcome for check in examination.signatures] == [outcome]
    assert examination.verdict.author_authentication is expected
