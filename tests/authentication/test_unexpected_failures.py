"""What the engine answers when a part it relies on raises something nobody planned for.

A key lookup that raises had no answer, exactly as one that timed out: the signatures and
the chain that needed it are unresolved, the author not established, never failed. Anything
else that raises is caught at the engine's edge and answered as not established. Either way
the log line names the exception's class, never its text (which may quote the message).
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

import structlog

from authentication.helpers import NO_TRUST, ed25519_key, key_name, message, rsa_key, sign
from mailfathom.adapters.authentication.arc import ArcChain
from mailfathom.adapters.authentication.dns_keys import ResolverSettings, TxtAnswer, TxtLookup
from mailfathom.adapters.authentication.engine import SenderVerificationEngine
from mailfathom.adapters.authentication.local_dkim import SignatureOutcome
from mailfathom.domain.sender_verdict import AuthorAuthentication, VerdictSource
from servers.dns import DnsServer

SECRET_TEXT = "Quarterly figures for alice@author.example"


class _Broken(RuntimeError):
    pass


class _RaisingLookup(TxtLookup):
    """Looks up nothing: every lookup raises, its text quoting what a message said."""

    def lookup(self, name: str, deadline: float) -> TxtAnswer:
        raise _Broken(SECRET_TEXT)


class _RaisingClock(TxtLookup):
    """A lookup whose clock raises: the engine meets it before any signature is checked."""

    def __init__(self) -> None:
        super().__init__(ResolverSettings(nameserver=("127.0.0.1", 9)), clock=self._now)

    def _now(self) -> float:
        raise _Broken(SECRET_TEXT)


def _engine(lookup: TxtLookup) -> SenderVerificationEngine:
    return SenderVerificationEngine(lookup, max_signatures=5, message_budget_seconds=10.0)


def _sealed(raw: bytes) -> bytes:
    """`raw` with an ARC set whose seal and signature name a key to be looked up."""
    return (
        b"ARC-Seal: i=1; a=rsa-sha256; cv=none; d=relay.example; s=arc; t=1700000000;\r\n"
        b" b=AAAA\r\n"
        b"ARC-Message-Signature: i=1; a=rsa-sha256; c=relaxed/relaxed; d=relay.example;\r\n"
        b" s=arc; t=1700000000; h=from:to:subject; bh=AAAA; b=AAAA\r\n"
        b"ARC-Authentication-Results: i=1; relay.example; dkim=pass\r\n" + raw
    )


def _logged_text(logged: list[MutableMapping[str, Any]]) -> str:
    return " ".join(str(value) for entry in logged for value in entry.values())


def test_a_lookup_that_raises_leaves_every_signature_unresolved_and_the_author_not_established(
    dns_server: DnsServer,
) -> None:
    raw = sign(message(), rsa_key(), domain="author.example", selector="s1")
    raw = sign(raw, ed25519_key(), domain="author.example", selector="s2")
    lookup = _RaisingLookup(ResolverSettings(nameserver=dns_server.address))

    with structlog.testing.capture_logs() as logged:
        examination = _engine(lookup).examine(
            _sealed(raw), headers_only=False, trusted_authserv_ids=NO_TRUST
        )

    assert [check.outcome for check in examination.signatures] == [
        SignatureOutcome.UNRESOLVED,
        SignatureOutcome.UNRESOLVED,
    ]
    assert examination.arc is ArcChain.NOT_ESTABLISHED
    assert examination.verdict.author_authentication is AuthorAuthentication.NOT_ESTABLISHED
    assert examination.verdict.verdict_source is VerdictSource.LOCAL_VERIFICATION
    assert examination.verdict.displayed_author_domain == "AUTHOR.EXAMPLE"
    assert [entry.get("error") for entry in logged] == ["_Broken"] * len(logged)
    assert logged
    assert "alice" not in _logged_text(logged)
    assert "Quarterly" not in _logged_text(logged)


def test_a_lookup_that_raises_is_asked_again_for_the_next_message(dns_server: DnsServer) -> None:
    """Nothing about a raised lookup is kept: it is no answer that a key is absent."""
    key = rsa_key()
    dns_server.publish(key_name("s1", "author.example"), key.record)
    raw = sign(message(), key, domain="author.example", selector="s1")
    calls: list[str] = []

    class _FailsOnce(TxtLookup):
        def lookup(self, name: str, deadline: float) -> TxtAnswer:
            calls.append(name)
            if len(calls) == 1:
                raise _Broken(SECRET_TEXT)
            return super().lookup(name, deadline)

    engine = _engine(_FailsOnce(ResolverSettings(nameserver=dns_server.address)))

    first = engine.verify(raw, headers_only=False, trusted_authserv_ids=NO_TRUST)
    second = engine.verify(raw, headers_only=False, trusted_authserv_ids=NO_TRUST)

    assert first.author_authentication is AuthorAuthentication.NOT_ESTABLISHED
    assert second.author_authentication is AuthorAuthentication.AUTHENTICATED
    assert len(calls) == 2


def test_anything_else_that_raises_is_answered_as_not_established_and_logged_by_class() -> None:
    raw = sign(message(), rsa_key(), domain="author.example", selector="s1")

    with structlog.testing.capture_logs() as logged:
        verdict = _engine(_RaisingClock()).verify(
            raw, headers_only=False, trusted_authserv_ids=NO_TRUST
        )

    assert verdict.author_authentication is AuthorAuthentication.NOT_ESTABLISHED
    assert verdict.authenticated_domain is None
    assert [(entry["event"], entry["error"]) for entry in logged] == [
        ("sender verification failed", "_Broken")
    ]
    assert "alice" not in _logged_text(logged)
