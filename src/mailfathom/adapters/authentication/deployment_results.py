"""The deployment's own `Authentication-Results` field, on mail it puts into a local mailbox.

Mail one account of this deployment sends to a peer mailbox never crosses a receiving server,
so nothing would say who sent it; yet the deployment knows exactly which account submitted
it. `delivered` writes that down, at the very top, under the deployment's authserv-id, in the
syntax a receiving server uses: the submitting account (`auth=pass smtp.auth=`) and whether
the displayed author is that account (`dmarc=`). Local accounts trust the id, so the verdict
engine reads this field like any trusted server's.

A field of that id must therefore never be topmost unless the deployment wrote it.
`unvouched` guards every other way into a local mailbox (an import): a message arriving with a
field of the id anywhere in its header block gets one above it saying nothing was
established, so the one below (a forgery, or a copy of a real one, which proves nothing once
out of the deployment's hands) is never read. A message without one keeps its bytes, and with
them its own DKIM signatures for the local check.
"""

from __future__ import annotations

import authres
import authres.dmarc

from mailfathom.adapters.authentication.domains import comparison_domain, displayed_author
from mailfathom.adapters.authentication.header_block import header_fields, values_of
from mailfathom.adapters.authentication.received_results import authserv_id


def delivered(
    mime: bytes, deployment_id: str, account_address: str | None, own_addresses: frozenset[str]
) -> bytes:
    """`mime` with the deployment's field on top, for mail the account whose addresses are
    `own_addresses` (lower case) submitted as `account_address`.

    `dmarc=pass` only where the From is exactly one mailbox and it is one of the account's
    own addresses; any other From is `dmarc=fail`: the deployment knows the author the
    message displays is not the account that sent it, which is a statement about the
    message and not an absence of one."""
    author = displayed_author(values_of(header_fields(mime), "from"))
    own = author is not None and author.lower() in own_addresses
    results: list[authres.core.AuthenticationResult] = []
    if account_address is not None:
        results.append(
            authres.SMTPAUTHAuthenticationResult(result="pass", smtp_auth=account_address)
        )
    domain = comparison_domain(author.rpartition("@")[2]) if author is not None else None
    results.append(
        authres.dmarc.DMARCAuthenticationResult(
            result="pass" if own else "fail", header_from=domain.lower() if domain else None
        )
    )
    return _prepended(mime, authres.AuthenticationResultsHeader(deployment_id, results=results))


def unvouched(mime: bytes, deployment_id: str) -> bytes:
    """`mime`, with a field of `deployment_id` saying nothing was established above any
    field of that id it carries; unchanged where it carries none."""
    folded = deployment_id.casefold()
    fields = header_fields(mime, limit=len(mime))
    if not any(authserv_id(v) == folded for v in values_of(fields, "authentication-results")):
        return mime
    return _prepended(mime, authres.AuthenticationResultsHeader(deployment_id, results=[]))


def _prepended(mime: bytes, header: authres.AuthenticationResultsHeader) -> bytes:
    newline = b"\r\n" if b"\r\n" in mime[: mime.find(b"\n") + 1] else b"\n"
    return str(header).encode("ascii") + newline + mime
