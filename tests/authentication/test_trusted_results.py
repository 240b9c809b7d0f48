"""A trusted receiving server's Authentication-Results (RFC 8601), read within bounds.

Each message here is unsigned, so a header that is ignored leaves the receiving server's
"nothing found" answer, and the engine's DNS server proves that no key was looked up.
"""

from __future__ import annotations

import pytest

from authentication.helpers import engine, message
from mailfathom.adapters.authentication.header_block import MAX_HEADER_FIELDS
from mailfathom.adapters.authentication.received_results import (
    MAX_FIELD_LENGTH,
    MAX_RESULTS_FIELDS,
    MAX_RESULTS_PER_FIELD,
)
from mailfathom.domain.sender_verdict import (
    AuthenticatedBy,
    AuthorAuthentication,
    DmarcResult,
    SenderVerdict,
    VerdictSource,
)
from servers.dns import DnsServer

TRUSTED = frozenset({"MX.Receiver.Example"})
PASS = (
    "mx.receiver.example; dkim=pass header.d=author.example header.s=s1; "
    "spf=pass smtp.mailfrom=bounces@author.example; dmarc=pass header.from=author.example"
)


def results(*values: str) -> bytes:
    fields = "".join(f"Authentication-Results: {value}\r\n" for value in values)
    return fields.encode() + message()


def verdict_of(dns_server: DnsServer, raw: bytes) -> SenderVerdict:
    verdict = engine(dns_server).verify(raw, headers_only=False, trusted_authserv_ids=TRUSTED)
    assert dns_server.questions() == 0
    return verdict


def test_a_trusted_dmarc_pass_authenticates_the_author(dns_server: DnsServer) -> None:
    verdict = verdict_of(dns_server, results(PASS))

    assert verdict == SenderVerdict(
        author_authentication=AuthorAuthentication.AUTHENTICATED,
        verdict_source=VerdictSource.RECEIVING_SERVER,
        authenticated_domain="AUTHOR.EXAMPLE",
        displayed_author_domain="AUTHOR.EXAMPLE",
        authenticated_by=AuthenticatedBy.DKIM,
        dmarc=DmarcResult.PASS,
    )


def test_the_authserv_id_is_compared_without_regard_to_case(dns_server: DnsServer) -> None:
    verdict = verdict_of(
        dns_server, results(PASS.replace("mx.receiver.example", "MX.RECEIVER.example"))
    )

    assert verdict.author_authentication is AuthorAuthentication.AUTHENTICATED


def test_the_header_of_an_untrusted_authserv_id_is_ignored(dns_server: DnsServer) -> None:
    verdict = verdict_of(
        dns_server, results(PASS.replace("mx.receiver.example", "mx.other.example"))
    )

    assert verdict.author_authentication is AuthorAuthentication.NOT_ESTABLISHED
    assert verdict.dmarc is DmarcResult.NOT_REPORTED
    assert verdict.verdict_source is VerdictSource.RECEIVING_SERVER


def test_a_forged_header_of_the_trusted_id_below_the_topmost_one_is_ignored(
    dns_server: DnsServer,
) -> None:
    topmost = "mx.receiver.example; dkim=none; spf=none; dmarc=fail header.from=author.example"

    verdict = verdict_of(dns_server, results(topmost, PASS))

    assert verdict.author_authentication is AuthorAuthentication.FAILED
    assert verdict.dmarc is DmarcResult.FAIL


def test_a_topmost_trusted_header_with_nothing_usable_does_not_fall_through_to_a_forged_one(
    dns_server: DnsServer,
) -> None:
    verdict = verdict_of(dns_server, results("mx.receiver.example; none", PASS))

    assert verdict.author_authentication is AuthorAuthentication.NOT_ESTABLISHED
    assert verdict.verdict_source is VerdictSource.RECEIVING_SERVER
    assert verdict.dmarc is DmarcResult.NOT_REPORTED


def test_untrusted_headers_above_the_trusted_one_are_passed_over(dns_server: DnsServer) -> None:
    untrusted = "mx.other.example; dmarc=fail header.from=author.example"

    verdict = verdict_of(dns_server, results(untrusted, PASS))

    assert verdict.author_authentication is AuthorAuthentication.AUTHENTICATED


def test_a_header_inside_a_mime_part_is_ignored(dns_server: DnsServer) -> None:
    raw = (
        b"From: alice@author.example\r\n"
        b"To: bob@example.net\r\n"
        b"Subject: forwarded\r\n"
        b"MIME-Version: 1.0\r\n"
        b'Content-Type: multipart/mixed; boundary="b1"\r\n'
        b"\r\n"
        b"--b1\r\n"
        b"Content-Type: text/plain\r\n" + f"Authentication-Results: {PASS}\r\n".encode() + b"\r\n"
        b"See the attached.\r\n"
        b"--b1\r\n"
        b"Content-Type: message/rfc822\r\n"
        b"\r\n"
        + f"Authentication-Results: {PASS}\r\n".encode()
        + b"From: alice@author.example\r\n\r\nInner.\r\n"
        b"--b1--\r\n"
    )

    verdict = verdict_of(dns_server, raw)

    assert verdict.author_authentication is AuthorAuthentication.NOT_ESTABLISHED
    assert verdict.dmarc is DmarcResult.NOT_REPORTED


def test_an_over_long_trusted_header_is_ignored_and_ends_the_search(dns_server: DnsServer) -> None:
    long_comment = "x" * MAX_FIELD_LENGTH
    topmost = f"mx.receiver.example; dkim=pass ({long_comment}) header.d=author.example"

    verdict = verdict_of(dns_server, results(topmost, PASS))

    assert verdict.author_authentication is AuthorAuthentication.NOT_ESTABLISHED
    assert verdict.authenticated_domain is None


def test_a_trusted_header_with_too_many_results_is_ignored(dns_server: DnsServer) -> None:
    many = "; ".join(["dkim=pass header.d=author.example"] * (MAX_RESULTS_PER_FIELD + 1))

    verdict = verdict_of(dns_server, results(f"mx.receiver.example; {many}", PASS))

    assert verdict.author_authentication is AuthorAuthentication.NOT_ESTABLISHED


def test_a_trusted_header_past_the_count_of_results_headers_is_not_looked_at(
    dns_server: DnsServer,
) -> None:
    filler = ["mx.other.example; none"] * MAX_RESULTS_FIELDS

    assert verdict_of(dns_server, results(*filler, PASS)).dmarc is DmarcResult.NOT_REPORTED
    assert verdict_of(dns_server, results(*filler[1:], PASS)).dmarc is DmarcResult.PASS


def test_a_trusted_header_past_the_count_of_header_fields_is_not_looked_at(
    dns_server: DnsServer,
) -> None:
    filler = b"".join(b"X-Filler: %d\r\n" % index for index in range(MAX_HEADER_FIELDS))

    verdict = verdict_of(dns_server, filler + results(PASS))

    assert verdict.dmarc is DmarcResult.NOT_REPORTED


def test_an_unparsable_trusted_header_is_not_established(dns_server: DnsServer) -> None:
    verdict = verdict_of(dns_server, results("mx.receiver.example; dkim=pass ;;; = =", PASS))

    assert verdict.author_authentication is AuthorAuthentication.NOT_ESTABLISHED


def test_a_dmarc_fail_fails_the_author(dns_server: DnsServer) -> None:
    header = "mx.receiver.example; dkim=pass header.d=author.example; dmarc=fail"

    verdict = verdict_of(dns_server, results(header))

    assert verdict.author_authentication is AuthorAuthentication.FAILED
    assert verdict.authenticated_by is AuthenticatedBy.DKIM


@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        ("dkim=pass header.d=mail.author.example", AuthorAuthentication.AUTHENTICATED),
        ("dkim=pass header.d=elsewhere.example", AuthorAuthentication.NOT_ESTABLISHED),
        ("dkim=fail header.d=author.example", AuthorAuthentication.FAILED),
        (
            "dkim=fail header.d=author.example; spf=temperror smtp.mailfrom=a@author.example",
            AuthorAuthentication.NOT_ESTABLISHED,
        ),
        ("spf=softfail smtp.mailfrom=a@author.example", AuthorAuthentication.NOT_ESTABLISHED),
    ],
)
def test_dmarc_none_leaves_the_verdict_to_aligned_results(
    dns_server: DnsServer, statement: str, expected: AuthorAuthentication
) -> None:
    verdict = verdict_of(dns_server, results(f"mx.receiver.example; {statement}; dmarc=none"))

    assert verdict.author_authentication is expected
    assert verdict.dmarc is DmarcResult.NONE


def test_an_aligned_spf_pass_alone_authenticates_by_spf(dns_server: DnsServer) -> None:
    header = "mx.receiver.example; spf=pass smtp.mailfrom=bounces@news.author.example"

    verdict = verdict_of(dns_server, results(header))

    assert verdict.author_authentication is AuthorAuthentication.AUTHENTICATED
    assert verdict.authenticated_by is AuthenticatedBy.SPF
    assert verdict.authenticated_domain == "NEWS.AUTHOR.EXAMPLE"
    assert verdict.dmarc is DmarcResult.NOT_REPORTED


def test_a_provider_signing_as_itself_while_spf_passes_for_the_author(
    dns_server: DnsServer,
) -> None:
    header = (
        "mx.receiver.example; dkim=pass header.d=provider.example; "
        "spf=pass smtp.mailfrom=alice@author.example"
    )

    verdict = verdict_of(dns_server, results(header))

    assert verdict.author_authentication is AuthorAuthentication.AUTHENTICATED
    assert verdict.authenticated_by is AuthenticatedBy.DKIM
    assert verdict.authenticated_domain == "PROVIDER.EXAMPLE"
    assert verdict.displayed_author_domain == "AUTHOR.EXAMPLE"


def test_a_dkim_result_naming_only_its_identity_uses_that_identitys_domain(
    dns_server: DnsServer,
) -> None:
    header = "mx.receiver.example; dkim=pass header.i=@author.example header.s=default"

    verdict = verdict_of(dns_server, results(header))

    assert verdict.author_authentication is AuthorAuthentication.AUTHENTICATED
    assert verdict.authenticated_domain == "AUTHOR.EXAMPLE"


def test_no_trusted_ids_trust_no_header(dns_server: DnsServer) -> None:
    verdict = engine(dns_server).verify(
        results(PASS), headers_only=False, trusted_authserv_ids=frozenset()
    )

    assert verdict.dmarc is DmarcResult.NOT_REPORTED


def test_a_trusted_header_decides_a_header_block_stored_alone(dns_server: DnsServer) -> None:
    headers = results(PASS).split(b"\r\n\r\n", 1)[0] + b"\r\n\r\n"

    verdict = engine(dns_server).verify(headers, headers_only=True, trusted_authserv_ids=TRUSTED)

    assert verdict.author_authentication is AuthorAuthentication.AUTHENTICATED
