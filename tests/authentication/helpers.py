"""Keys, signed messages and engines for the sender-verification tests."""

from __future__ import annotations

import base64
import time
from collections.abc import Callable
from dataclasses import dataclass

import dkim
import nacl.signing
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from mailfathom.adapters.authentication.dns_keys import ResolverSettings, TxtLookup
from mailfathom.adapters.authentication.engine import SenderVerificationEngine
from servers.dns import DnsServer


@dataclass(frozen=True)
class SigningKey:
    algorithm: bytes
    private: bytes
    record: str


def rsa_key(bits: int = 2048) -> SigningKey:
    key = rsa.generate_private_key(public_exponent=65537, key_size=bits)
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    )
    public = key.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return SigningKey(
        b"rsa-sha256", private, f"v=DKIM1; k=rsa; p={base64.b64encode(public).decode()}"
    )


def ed25519_key() -> SigningKey:
    key = nacl.signing.SigningKey.generate()
    public = base64.b64encode(bytes(key.verify_key)).decode()
    return SigningKey(
        b"ed25519-sha256", base64.b64encode(bytes(key)), f"v=DKIM1; k=ed25519; p={public}"
    )


def message(author: str = "Alice <alice@author.example>", body: str = "Hello there.\r\n") -> bytes:
    return (
        f"From: {author}\r\n"
        "To: bob@example.net\r\n"
        "Subject: Quarterly figures\r\n"
        "Date: Mon, 02 Jan 2023 10:00:00 +0000\r\n"
        "Message-ID: <figures-1@author.example>\r\n"
        "\r\n"
        f"{body}"
    ).encode()


def sign(
    raw: bytes,
    key: SigningKey,
    *,
    domain: str,
    selector: str,
    canonicalize: tuple[bytes, bytes] = (b"relaxed", b"relaxed"),
) -> bytes:
    """`raw` with one more DKIM-Signature on top, canonicalized header/body as `canonicalize`."""
    header: bytes = dkim.sign(
        raw,
        selector.encode(),
        domain.encode(),
        key.private,
        signature_algorithm=key.algorithm,
        canonicalize=canonicalize,
    )
    return header + raw


def key_name(selector: str, domain: str) -> str:
    return f"{selector}._domainkey.{domain}"


def engine(
    server: DnsServer,
    *,
    lookup_timeout: float = 2.0,
    budget: float = 10.0,
    max_signatures: int = 5,
    max_ttl: float = 3600.0,
    negative: float = 300.0,
    clock: Callable[[], float] = time.monotonic,
) -> SenderVerificationEngine:
    lookup = TxtLookup(
        ResolverSettings(
            nameserver=server.address,
            lookup_timeout_seconds=lookup_timeout,
            max_cache_ttl_seconds=max_ttl,
            negative_cache_seconds=negative,
        ),
        clock=clock,
    )
    return SenderVerificationEngine(
        lookup, max_signatures=max_signatures, message_budget_seconds=budget
    )


NO_TRUST: frozenset[str] = frozenset()
