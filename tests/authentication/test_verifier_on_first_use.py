"""The verifier a deployment opens with builds its engine on the first message, and answers
as the engine does."""

from __future__ import annotations

import dataclasses

from authentication.mail import mail, results
from mailfathom.adapters.authentication.engine import build_sender_verifier
from mailfathom.adapters.authentication.on_first_use import sender_verifier
from mailfathom.domain.config import DEFAULT_AUTHSERV_ID, SenderVerificationConfig
from mailfathom.domain.sender_verdict import AuthorAuthentication

TRUSTED = frozenset({DEFAULT_AUTHSERV_ID})


def test_switched_off_there_is_no_verifier() -> None:
    config = dataclasses.replace(SenderVerificationConfig(), enabled=False)
    assert sender_verifier(config) is None


def test_the_verdict_is_the_engines() -> None:
    raw = mail(
        "Rota", "a@example.org", "Yours.\r\n", results(DEFAULT_AUTHSERV_ID, "pass", "example.org")
    )
    config = SenderVerificationConfig()
    on_first_use = sender_verifier(config)
    engine = build_sender_verifier(config)
    assert on_first_use is not None
    assert engine is not None
    for _ in range(2):
        verdict = on_first_use.verify(raw, headers_only=False, trusted_authserv_ids=TRUSTED)
        assert verdict == engine.verify(raw, headers_only=False, trusted_authserv_ids=TRUSTED)
    assert verdict.author_authentication is AuthorAuthentication.AUTHENTICATED
