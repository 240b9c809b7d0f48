"""The canonicalization vectors of the shared corpora, against what the engine verifies with.

The engine hands a message to dkimpy, which splits it into header fields and body
(`dkim.rfc822_parse`, LF or CRLF line ends), canonicalizes them (`dkim.canonicalization`,
RFC 6376 section 3.4) and hashes the result. Each vector of `flanker-dkim-canon` is a message
(`email.NN`) and, per algorithm, the canonical header fields, the empty line that ends them,
and the canonical body (`simple.expected.NN`, `relaxed.expected.NN`). Every one of the 21
vectors agrees byte for byte with dkimpy under both algorithms, header part and body part
each on its own; there is no disagreement to account for.

What that means for verification is shown by signing each vector: the body hash the
signature carries is the hash of the vector's expected body, the signature verifies as
written, and after a relay rewrote the message's whitespace (the change RFC 6376 section
3.4.2 and 3.4.4 make relaxed tolerate) a relaxed signature still verifies while a simple one
fails.

The third expected file of each vector, `nofws.expected.NN`, is DomainKeys' "nofws" algorithm
(RFC 4870 section 3.4.2.2, every whitespace character removed). DKIM has no such algorithm
and RFC 4870 is historic, so a DomainKey-Signature field is never evidence here: a message
carrying one (and no DKIM-Signature) is not established, no key looked up.
"""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

import dkim
import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from dkim.canonicalization import Relaxed, Simple
from dkim.util import parse_tag_value

from authentication.helpers import NO_TRUST, SigningKey, engine, key_name, sign
from mailfathom.adapters.authentication.local_dkim import SignatureOutcome
from mailfathom.domain.sender_verdict import AuthorAuthentication
from servers.dns import DnsServer

VECTORS = (
    *(f"{number:02d}" for number in range(1, 15)),
    *(f"{number:02d}" for number in range(19, 26)),
)
ALGORITHMS = {b"simple": Simple, b"relaxed": Relaxed}
DOMAIN = "example.net"
"""The domain of every vector's author (`From: <joe@example.net>`)."""


def _vector(corpora: Path, kind: str, number: str) -> bytes:
    return (corpora / "dkim" / "flanker-dkim-canon" / f"{kind}.{number}").read_bytes()


def _expected_parts(expected: bytes) -> tuple[bytes, bytes]:
    """The canonical header fields (each ending in CRLF) and the canonical body of an
    expected file, split at the empty line between them."""
    if expected.startswith(b"\r\n"):
        return b"", expected[2:]
    end = expected.index(b"\r\n\r\n") + 2
    return expected[:end], expected[end + 2 :]


def _data_key(corpora: Path) -> tuple[SigningKey, str]:
    folder = corpora / "dkim" / "dkimpy"
    key = SigningKey(b"rsa-sha256", (folder / "test.private").read_bytes(), "")
    return key, (folder / "test.txt").read_text().strip()


def test_the_corpus_holds_exactly_the_vectors_named_here(corpora: Path) -> None:
    folder = corpora / "dkim" / "flanker-dkim-canon"
    found = sorted(path.suffix.lstrip(".") for path in folder.glob("email.*"))
    assert found == list(VECTORS)
    for number in VECTORS:
        for kind in ("simple.expected", "relaxed.expected", "nofws.expected", "purpose"):
            assert (folder / f"{kind}.{number}").is_file()


@pytest.mark.parametrize("algorithm", list(ALGORITHMS))
@pytest.mark.parametrize("number", VECTORS)
def test_dkimpy_canonicalizes_every_vector_as_expected(
    corpora: Path, number: str, algorithm: bytes
) -> None:
    canonicalization = ALGORITHMS[algorithm]
    headers, body = dkim.rfc822_parse(_vector(corpora, "email", number))
    expected_headers, expected_body = _expected_parts(
        _vector(corpora, f"{algorithm.decode()}.expected", number)
    )

    produced_headers = b"".join(
        name + b":" + value for name, value in canonicalization.canonicalize_headers(headers)
    )

    assert produced_headers == expected_headers
    assert canonicalization.canonicalize_body(body) == expected_body


def _transported(email: bytes) -> bytes:
    """`email` as a relay that rewrites whitespace passes it on: more whitespace after each
    field's colon, in each run of spaces, on each continuation line and at the end of each
    body line, and two more empty lines at the end. The empty line ending the header fields
    stays empty, and the last line keeps its (lack of an) ending."""
    lines = email.split(b"\n")
    changed: list[bytes] = []
    in_header = True
    for index, line in enumerate(lines):
        last = index == len(lines) - 1
        if last:
            changed.append(line)
        elif in_header and not line.rstrip(b"\r"):
            in_header = False
            changed.append(line)
        elif in_header and line[:1] in (b" ", b"\t"):
            changed.append(b"\t" + line.replace(b" ", b"  "))
        elif in_header:
            name, _, value = line.partition(b":")
            changed.append(name + b": \t" + value.replace(b" ", b"  "))
        else:
            changed.append(line.replace(b" ", b"  ") + b" \t")
    return b"\n".join(changed) + b"\n\n"


SIGNABLE = tuple(number for number in VECTORS if number != "01")
"""Every vector but the empty message: dkimpy signs nothing without a From field."""


@pytest.mark.parametrize("algorithm", list(ALGORITHMS))
@pytest.mark.parametrize("number", SIGNABLE)
def test_a_signature_over_a_vector_hashes_its_expected_body_and_verifies(
    corpora: Path, dns_server: DnsServer, number: str, algorithm: bytes
) -> None:
    key, record = _data_key(corpora)
    dns_server.publish(key_name("test", DOMAIN), record)
    email = _vector(corpora, "email", number)
    _, expected_body = _expected_parts(_vector(corpora, f"{algorithm.decode()}.expected", number))

    signed = sign(email, key, domain=DOMAIN, selector="test", canonicalize=(algorithm, algorithm))
    examination = engine(dns_server).examine(
        signed, headers_only=False, trusted_authserv_ids=NO_TRUST
    )

    signature = parse_tag_value(dkim.rfc822_parse(signed)[0][0][1])
    assert signature[b"bh"] == base64.b64encode(hashlib.sha256(expected_body).digest())
    assert [check.outcome for check in examination.signatures] == [SignatureOutcome.PASS]
    assert examination.verdict.author_authentication is AuthorAuthentication.AUTHENTICATED


UNTERMINATED_WHITESPACE = "24"
"""The one vector whose message ends in a line of whitespace with no line end. The corpus and
dkimpy alike canonicalize that line, under relaxed, to one SP and a CRLF (`relaxed.expected.24`
ends in `" \\r\\n"`): the trailing-whitespace rule is applied to lines ended by a CRLF only,
before the missing CRLF is added. A relay that ends the line (SMTP always does) makes it an
empty line, which relaxed ignores at the end of the body, so the body hash changes and the
signature fails. RFC 6376 section 3.4.4 can be read either way; a signer meets this case only
with a message that was never in SMTP form, so the engine keeps dkimpy's reading, which is the
corpus's."""

RELAXED_AFTER_TRANSPORT = {
    number: AuthorAuthentication.FAILED
    if number == UNTERMINATED_WHITESPACE
    else AuthorAuthentication.AUTHENTICATED
    for number in SIGNABLE
}


@pytest.mark.parametrize(
    ("number", "algorithm", "expected"),
    [
        *((number, b"relaxed", expected) for number, expected in RELAXED_AFTER_TRANSPORT.items()),
        *((number, b"simple", AuthorAuthentication.FAILED) for number in SIGNABLE),
    ],
)
def test_rewritten_whitespace_keeps_a_relaxed_signature_and_breaks_a_simple_one(
    corpora: Path,
    dns_server: DnsServer,
    number: str,
    algorithm: bytes,
    expected: AuthorAuthentication,
) -> None:
    key, record = _data_key(corpora)
    dns_server.publish(key_name("test", DOMAIN), record)
    email = _vector(corpora, "email", number)
    signature = sign(
        email, key, domain=DOMAIN, selector="test", canonicalize=(algorithm, algorithm)
    ).removesuffix(email)
    transported = signature + _transported(email)
    assert transported != signature + email

    verdict = engine(dns_server).verify(
        transported, headers_only=False, trusted_authserv_ids=NO_TRUST
    )

    assert verdict.author_authentication is expected


def test_the_empty_vector_is_not_established(dns_server: DnsServer, corpora: Path) -> None:
    examination = engine(dns_server).examine(
        _vector(corpora, "email", "01"), headers_only=False, trusted_authserv_ids=NO_TRUST
    )

    assert examination.signatures == ()
    assert examination.verdict.author_authentication is AuthorAuthentication.NOT_ESTABLISHED
    assert examination.verdict.displayed_author_domain is None


@pytest.mark.parametrize("number", VECTORS)
def test_a_domainkeys_signature_over_a_vector_is_never_evidence(
    corpora: Path, dns_server: DnsServer, number: str
) -> None:
    """The DomainKeys signature is a real one (RSA-SHA1 over the vector's nofws form, RFC
    4870 section 3.4) by a key that is published, so nothing but the engine's not reading
    DomainKeys keeps it from counting."""
    key, record = _data_key(corpora)
    dns_server.publish(key_name("test", DOMAIN), record)
    private = serialization.load_pem_private_key(key.private, password=None)
    assert isinstance(private, rsa.RSAPrivateKey)
    value = private.sign(
        _vector(corpora, "nofws.expected", number),
        padding.PKCS1v15(),
        hashes.SHA1(),  # noqa: S303 (DomainKeys signs with SHA-1 only)
    )
    field = (
        b"DomainKey-Signature: a=rsa-sha1; q=dns; c=nofws; d=example.net; s=test;\r\n"
        b" b=" + base64.b64encode(value) + b"\r\n"
    )

    examination = engine(dns_server).examine(
        field + _vector(corpora, "email", number),
        headers_only=False,
        trusted_authserv_ids=NO_TRUST,
    )

    assert examination.signatures == ()
    assert examination.verdict.author_authentication is AuthorAuthentication.NOT_ESTABLISHED
    assert dns_server.questions() == 0
