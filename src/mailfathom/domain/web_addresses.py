"""Which web addresses the deployment reads from or writes into what it publishes.

An address is https, or http on a loopback host (a test, or a proxy on the same machine):
nothing the deployment sends or is told about crosses a network in the clear. It carries no
user, query or fragment, so it can be compared and appended to as written.

An OAuth endpoint the deployment posts secrets to (a refresh token, a client secret, a
person's grant) follows the same rule, with a query allowed (RFC 6749 section 3.1). The rule
is the project's own and no setting of the environment loosens it: a variable left in a
shell must never let a secret cross a network unprotected.
"""

from __future__ import annotations

import ipaddress
import urllib.parse

from mailfathom.domain import text_rules

_URL_LIMIT = 1024
_ENDPOINT_LIMIT = 2048


def is_loopback(host: str) -> bool:
    name = host.rstrip(".").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    literal = name[1:-1] if name.startswith("[") and name.endswith("]") else name
    try:
        address = ipaddress.ip_address(literal)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


def is_secure_address(text: str) -> bool:
    """Whether `text` is an absolute https address with a host (http on a loopback host)
    and no user, query or fragment."""
    if not 0 < len(text) <= _URL_LIMIT or not text_rules.is_name(text):
        return False
    if any(char.isspace() for char in text):
        return False
    try:
        parts = urllib.parse.urlsplit(text)
        port_ok = parts.port is None or 0 < parts.port < 65536
    except ValueError:
        return False
    host = parts.hostname
    if not port_ok or not host or parts.username is not None or parts.password is not None:
        return False
    if parts.query or parts.fragment or text.endswith(("?", "#")):
        return False
    scheme = parts.scheme.lower()
    return scheme == "https" or (scheme == "http" and is_loopback(host))


def endpoint_problem(text: str) -> str | None:
    """Why `text` cannot be an OAuth endpoint, or None when it can: an absolute `https://`
    address (`http://` only on a loopback host), without credentials or a fragment."""
    if (
        len(text) > _ENDPOINT_LIMIT
        or not text_rules.is_name(text)
        or any(c.isspace() for c in text)
    ):
        return f"must be an address of at most {_ENDPOINT_LIMIT} characters, no spaces"
    try:
        parts = urllib.parse.urlsplit(text)
        host = parts.hostname
        _ = parts.port  # raises on a port that is not a number
    except ValueError:
        return "must be an absolute https:// address"
    if parts.scheme not in ("https", "http") or not host:
        return "must be an absolute https:// address"
    if parts.username is not None or parts.password is not None or parts.fragment:
        return "must carry no user name, password or fragment"
    if parts.scheme == "http" and not is_loopback(host):
        return (
            "must be https:// unless its host is localhost or a loopback address: the "
            "refresh token and client secret would cross a network in clear text"
        )
    return None
