"""What a trusted receiving server reported, read from its `Authentication-Results` field.

RFC 8601 section 5 is the rule this follows: a field is evidence only when its authserv-id
names a server the account trusts, and anyone upstream can write a field naming any id. The
receiving server adds its own field above everything that arrived with the message, so only
the topmost field carrying a trusted id is read; one of the same id further down was already
in the message when it arrived, and is ignored along with fields inside MIME parts (never
read: only the top-level header block is) and fields of ids nobody trusted.

The topmost trusted field is the answer even when it cannot be used (too long, too many
results, not parseable): falling through to the next trusted field would hand the verdict to
a field the sender could have written.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import authres
import authres.arc
import authres.dmarc

from mailfathom.adapters.authentication.domains import aligned, domain_of_identity
from mailfathom.adapters.authentication.header_block import HeaderField
from mailfathom.domain.sender_verdict import (
    AuthenticatedBy,
    AuthorAuthentication,
    DmarcResult,
    SenderVerdict,
    VerdictSource,
)

MAX_RESULTS_FIELDS = 32
"""How many `Authentication-Results` fields, from the top, are looked at for a trusted id.
Each hop of a receiving infrastructure adds one or two; a message arriving with more than this
above the trusted one did not come the way trusted mail comes."""

MAX_RESULTS_PER_FIELD = 32
"""How many results (`method=result` statements) a trusted field may carry. A receiving
server reports a handful (dkim per signature, spf, dmarc, arc, iprev); a field past this is
ignored rather than partly read."""

MAX_FIELD_LENGTH = 8192
"""How long a looked-at field may be, unfolded. The parser's cost grows with the text; real
fields are a few hundred characters, and a field past this is ignored, never parsed."""

_FEATURES = authres.FeatureContext(authres.dmarc, authres.arc)
_AUTHSERV_ID = re.compile(r'\s*(?:\([^()]*\)\s*)*("(?:[^"\\]|\\.)*"|[^\s;()"]+)')
_DKIM_FAILED = frozenset({"fail", "permerror"})
_SPF_FAILED = frozenset({"fail"})
_DMARC = {result.value: result for result in DmarcResult if result is not DmarcResult.NOT_REPORTED}


@dataclass(frozen=True, slots=True)
class _Identity:
    domain: str | None
    result: str


def authserv_id(value: str) -> str | None:
    """The authserv-id a field names (RFC 8601 section 2.2), lower-cased, read without
    parsing the rest, so that a field too long to parse can still be recognized as trusted."""
    match = _AUTHSERV_ID.match(value[:512])
    if match is None:
        return None
    token = match.group(1)
    if token.startswith('"'):
        token = token[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    return token.casefold() or None


def trusted_verdict(
    fields: list[HeaderField],
    trusted_ids: Iterable[str],
    author_domain: str | None,
) -> SenderVerdict | None:
    """The verdict the topmost trusted field supports, or None when no looked-at field
    carries a trusted id."""
    trusted = frozenset(item.casefold() for item in trusted_ids)
    if not trusted:
        return None
    looked_at = [field for field in fields if field.name == "authentication-results"]
    for field in looked_at[:MAX_RESULTS_FIELDS]:
        if authserv_id(field.value) not in trusted:
            continue
        results = _parse(field)
        if results is None:
            return _verdict(AuthorAuthentication.NOT_ESTABLISHED, None, author_domain)
        return _judge(results, author_domain)
    return None


def nothing_found(author_domain: str | None) -> SenderVerdict:
    """The receiving server's answer where it wrote nothing this deployment trusts and
    nothing else was checked."""
    return _verdict(AuthorAuthentication.NOT_ESTABLISHED, None, author_domain)


def _parse(field: HeaderField) -> list[authres.core.AuthenticationResult] | None:
    if field.length > MAX_FIELD_LENGTH:
        return None
    try:
        header = _FEATURES.parse_value(field.value)
    except Exception:
        return None
    results = list(header.results)
    if len(results) > MAX_RESULTS_PER_FIELD:
        return None
    return results


def _judge(
    results: list[authres.core.AuthenticationResult], author_domain: str | None
) -> SenderVerdict:
    dmarc = _dmarc(results)
    dkim = [_identity(r, ("header", "d"), ("header", "i")) for r in _method(results, "dkim")]
    spf = [_identity(r, ("smtp", "mailfrom"), ("smtp", "helo")) for r in _method(results, "spf")]

    if dmarc is DmarcResult.PASS:
        conclusion = AuthorAuthentication.AUTHENTICATED
    elif dmarc is DmarcResult.FAIL:
        conclusion = AuthorAuthentication.FAILED
    else:
        conclusion = _by_alignment(dkim, spf, author_domain)

    by, domain = _reported_identity(dkim, spf, author_domain)
    return SenderVerdict(
        author_authentication=conclusion,
        verdict_source=VerdictSource.RECEIVING_SERVER,
        authenticated_domain=domain,
        displayed_author_domain=author_domain,
        authenticated_by=by,
        dmarc=dmarc,
    )


def _by_alignment(
    dkim: list[_Identity], spf: list[_Identity], author_domain: str | None
) -> AuthorAuthentication:
    aligned_dkim = [item for item in dkim if aligned(item.domain, author_domain)]
    aligned_spf = [item for item in spf if aligned(item.domain, author_domain)]
    if any(item.result == "pass" for item in aligned_dkim + aligned_spf):
        return AuthorAuthentication.AUTHENTICATED
    failing = all(item.result in _DKIM_FAILED for item in aligned_dkim) and all(
        item.result in _SPF_FAILED for item in aligned_spf
    )
    if (aligned_dkim or aligned_spf) and failing:
        return AuthorAuthentication.FAILED
    return AuthorAuthentication.NOT_ESTABLISHED


def _reported_identity(
    dkim: list[_Identity], spf: list[_Identity], author_domain: str | None
) -> tuple[AuthenticatedBy, str | None]:
    """The identity published as `authenticatedDomain`: a DKIM pass that produced a domain
    where there is one, else an SPF pass; an aligned one before one that is not."""
    for method, identities in ((AuthenticatedBy.DKIM, dkim), (AuthenticatedBy.SPF, spf)):
        passed = [item.domain for item in identities if item.result == "pass" and item.domain]
        if passed:
            preferred = [domain for domain in passed if aligned(domain, author_domain)]
            return method, (preferred or passed)[0]
    return AuthenticatedBy.NONE, None


def _method(
    results: list[authres.core.AuthenticationResult], method: str
) -> list[authres.core.AuthenticationResult]:
    return [result for result in results if str(result.method).lower() == method]


def _dmarc(results: list[authres.core.AuthenticationResult]) -> DmarcResult:
    for result in _method(results, "dmarc"):
        return _DMARC.get(str(result.result or "").lower(), DmarcResult.NOT_REPORTED)
    return DmarcResult.NOT_REPORTED


def _identity(result: authres.core.AuthenticationResult, *keys: tuple[str, str]) -> _Identity:
    found: dict[tuple[str, str], str] = {}
    for prop in result.properties or ():
        key = (str(prop.type).lower(), str(prop.name).lower())
        if key not in found and prop.value is not None:
            found[key] = str(prop.value)
    domain = None
    for key in keys:
        domain = domain_of_identity(found.get(key))
        if domain is not None:
            break
    return _Identity(domain=domain, result=str(result.result or "").lower())


def _verdict(
    conclusion: AuthorAuthentication, domain: str | None, author_domain: str | None
) -> SenderVerdict:
    return SenderVerdict(
        author_authentication=conclusion,
        verdict_source=VerdictSource.RECEIVING_SERVER,
        authenticated_domain=domain,
        displayed_author_domain=author_domain,
        authenticated_by=AuthenticatedBy.NONE,
        dmarc=DmarcResult.NOT_REPORTED,
    )
