"""Domains as a verdict compares and publishes them.

Two forms matter. The comparison form is what the store keeps and the contract publishes:
upper-cased, an internationalized name in its IDNA ASCII form (UTS #46 mapping first, so a
name written in any case or width maps to one spelling). Alignment (RFC 7489 section 3.2,
relaxed mode) compares organizational domains, which the Public Suffix List decides; the list
bundled with `publicsuffixlist` is used as shipped and never fetched, so a verdict is the same
offline and is never the result of a network answer about the list itself.
"""

from __future__ import annotations

import threading
from email.utils import getaddresses

import idna
from publicsuffixlist import PublicSuffixList

MAX_DOMAIN_LENGTH = 253
"""RFC 1035 section 2.3.4: no longer name exists; longer text is not a domain."""

MAX_FROM_LENGTH = 2048
"""A From field longer than this is not read for its mailbox. Real From fields are a display
name and one address; the address parser is the standard library's, whose cost grows with the
text, and the field is text the sender wrote."""

_psl_lock = threading.Lock()
_psl: PublicSuffixList | None = None


def _suffix_list() -> PublicSuffixList:
    global _psl
    with _psl_lock:
        if _psl is None:
            _psl = PublicSuffixList()
        return _psl


def comparison_domain(text: str | bytes | None) -> str | None:
    """`text` as a domain in comparison form, or None when it is not one."""
    if text is None:
        return None
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            return None
    name = text.strip().rstrip(".")
    if not name or len(name) > MAX_DOMAIN_LENGTH or any(ch.isspace() for ch in name):
        return None
    try:
        ascii_name = idna.encode(name, uts46=True).decode("ascii")
    except (idna.IDNAError, UnicodeError, ValueError):
        if not name.isascii():
            return None
        ascii_name = name
    if not _is_hostname(ascii_name):
        return None
    return ascii_name.upper()


def _is_hostname(name: str) -> bool:
    labels = name.split(".")
    return len(labels) >= 1 and all(
        0 < len(label) <= 63 and all(ch.isalnum() or ch in "-_" for ch in label) for label in labels
    )


def organizational_domain(domain: str) -> str:
    """The organizational domain of a comparison-form domain (RFC 7489 section 3.2): the
    public suffix plus one label. A name that is itself a public suffix is its own."""
    private = _suffix_list().privatesuffix(domain.lower())
    return (private or domain).upper()


def aligned(identity_domain: str | None, author_domain: str | None) -> bool:
    """Relaxed alignment: both domains share one organizational domain."""
    if identity_domain is None or author_domain is None:
        return False
    if identity_domain == author_domain:
        return True
    return organizational_domain(identity_domain) == organizational_domain(author_domain)


def domain_of_identity(text: str | None) -> str | None:
    """The domain of an identity a result names: an address (`user@domain`, `@domain`) or a
    bare domain, as RFC 8601 properties such as `smtp.mailfrom` and `header.i` carry them."""
    if text is None:
        return None
    value = text.strip().strip("<>")
    _, _, domain = value.rpartition("@")
    return comparison_domain(domain)


def displayed_author_domain(from_values: list[str]) -> str | None:
    """The domain of the one mailbox the From header displays, or None when there is not
    exactly one From field naming exactly one usable mailbox (RFC 7489 section 6.6.1 leaves
    such a message without an author domain)."""
    author = displayed_author(from_values)
    return None if author is None else comparison_domain(author.rpartition("@")[2])


def displayed_author(from_values: list[str]) -> str | None:
    """The address of the one mailbox the From header displays, as written, or None as for
    `displayed_author_domain`."""
    if len(from_values) != 1:
        return None
    value = from_values[0]
    if len(value) > MAX_FROM_LENGTH:
        return None
    try:
        pairs = getaddresses([" ".join(value.split())])
    except Exception:
        return None
    mailboxes = [address for _, address in pairs if address]
    if len(mailboxes) != 1:
        return None
    local, at, _ = mailboxes[0].rpartition("@")
    if not at or not local:
        return None
    return mailboxes[0]
