"""The sender verifier a deployment opens with, loading dkim and dnspython (and setting up
the resolver) only when a message is first verified: most commands open the deployment and
verify nothing."""

from __future__ import annotations

import threading

from mailfathom.app.sync.trust_ports import SenderVerifier
from mailfathom.domain.config import SenderVerificationConfig
from mailfathom.domain.sender_verdict import SenderVerdict


class VerifierOnFirstUse:
    """Builds the engine `config` describes on the first `verify`, once, for every thread."""

    def __init__(self, config: SenderVerificationConfig) -> None:
        self._config = config
        self._engine: SenderVerifier | None = None
        self._lock = threading.Lock()

    def verify(
        self, raw: bytes, *, headers_only: bool, trusted_authserv_ids: frozenset[str]
    ) -> SenderVerdict:
        return self._built().verify(
            raw, headers_only=headers_only, trusted_authserv_ids=trusted_authserv_ids
        )

    def _built(self) -> SenderVerifier:
        with self._lock:
            if self._engine is None:
                from mailfathom.adapters.authentication.engine import build_sender_verifier

                engine = build_sender_verifier(self._config)
                assert engine is not None, "made only for an enabled configuration"
                self._engine = engine
            return self._engine


def sender_verifier(config: SenderVerificationConfig) -> VerifierOnFirstUse | None:
    """None where verification is switched off (nothing is written for a message, which
    reads back as not yet verified), else the verifier, built on first use."""
    return VerifierOnFirstUse(config) if config.enabled else None
