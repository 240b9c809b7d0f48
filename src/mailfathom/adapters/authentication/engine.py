"""The sender-verification engine synchronization asks, once per stored message, who sent it.

The order is the contract's: a trusted receiving server's `Authentication-Results` first;
where none exists, the message's own DKIM signatures, verified here; where there are none
either (or only the header block was stored, and DKIM needs the body), the receiving
server's answer that nothing was established. The ARC chain is validated alongside the local
check as evidence (`Examination.arc`) and never changes the verdict (see `arc`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import structlog

from mailfathom.adapters.authentication.arc import ArcChain, validate_chain
from mailfathom.adapters.authentication.dns_keys import ResolverSettings, TxtLookup
from mailfathom.adapters.authentication.domains import displayed_author_domain
from mailfathom.adapters.authentication.header_block import header_fields, values_of
from mailfathom.adapters.authentication.key_session import KeySession
from mailfathom.adapters.authentication.local_dkim import (
    SignatureCheck,
    check_signatures,
    local_verdict,
)
from mailfathom.adapters.authentication.received_results import nothing_found, trusted_verdict
from mailfathom.domain.config import SenderVerificationConfig
from mailfathom.domain.sender_verdict import SenderVerdict

log = structlog.get_logger("mailfathom.authentication")
_ARC_FIELDS = ("arc-seal", "arc-message-signature", "arc-authentication-results")


@dataclass(frozen=True, slots=True)
class Examination:
    """A verdict with what the local check saw on the way: each signature it verified (none
    where a trusted header answered) and the ARC chain (`NONE` where it was not validated)."""

    verdict: SenderVerdict
    signatures: tuple[SignatureCheck, ...] = ()
    arc: ArcChain = ArcChain.NONE


class SenderVerificationEngine:
    """Implements synchronization's `SenderVerifier` port.

    Thread-safe: the only state shared between calls is the key lookup and its cache, which
    lock; each call has its own lookup session and budget. It never raises: an unexpected
    failure is logged by exception class alone and answered as not established.
    """

    def __init__(
        self, lookup: TxtLookup, *, max_signatures: int, message_budget_seconds: float
    ) -> None:
        self._lookup = lookup
        self._max_signatures = max_signatures
        self._budget = message_budget_seconds

    def verify(
        self, raw: bytes, *, headers_only: bool, trusted_authserv_ids: frozenset[str]
    ) -> SenderVerdict:
        return self.examine(
            raw, headers_only=headers_only, trusted_authserv_ids=trusted_authserv_ids
        ).verdict

    def examine(
        self, raw: bytes, *, headers_only: bool, trusted_authserv_ids: Iterable[str]
    ) -> Examination:
        try:
            return self._examine(raw, headers_only, trusted_authserv_ids)
        except Exception as error:
            log.error("sender verification failed", error=type(error).__name__)
            return Examination(nothing_found(None))

    def _examine(
        self, raw: bytes, headers_only: bool, trusted_authserv_ids: Iterable[str]
    ) -> Examination:
        fields = header_fields(raw)
        author = displayed_author_domain(values_of(fields, "from"))
        reported = trusted_verdict(fields, trusted_authserv_ids, author)
        if reported is not None:
            return Examination(reported)
        signed = bool(values_of(fields, "dkim-signature"))
        sealed = any(values_of(fields, name) for name in _ARC_FIELDS)
        if headers_only or not (signed or sealed):
            return Examination(nothing_found(author))
        session = KeySession(self._lookup, self._budget)
        checks = check_signatures(raw, session, self._max_signatures) if signed else []
        chain = validate_chain(raw, session) if sealed else ArcChain.NONE
        verdict = local_verdict(checks, author) if signed else nothing_found(author)
        return Examination(verdict, tuple(checks), chain)


def build_sender_verifier(config: SenderVerificationConfig) -> SenderVerificationEngine | None:
    """The engine the configuration describes, or None where verification is switched off
    (then nothing is written for a message, which reads back as not yet verified)."""
    if not config.enabled:
        return None
    lookup = TxtLookup(
        ResolverSettings(
            nameserver=config.resolver,
            lookup_timeout_seconds=config.lookup_timeout_seconds,
            max_cache_entries=config.cache_entries,
            max_cache_ttl_seconds=config.max_cache_ttl_seconds,
            negative_cache_seconds=config.negative_cache_seconds,
        )
    )
    return SenderVerificationEngine(
        lookup,
        max_signatures=config.max_signatures,
        message_budget_seconds=config.message_budget_seconds,
    )
