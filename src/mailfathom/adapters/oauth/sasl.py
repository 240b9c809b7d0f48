"""Presenting an access token to a mail server over SASL, for IMAP and SMTP alike.

`OAUTHBEARER` is RFC 7628's mechanism; `XOAUTH2` is the older one Google and Microsoft
introduced, which most servers still announce. Both carry the token as an HTTP bearer
credential in a single initial response. When the server refuses, it first sends a
challenge holding a JSON error, which the client answers with a dummy response so the
server can end the exchange with its failure reply: `%x01` for OAUTHBEARER (RFC 7628
section 3.2.3), an empty response for XOAUTH2.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from mailfathom.adapters.oauth.grant_health import GrantHealth
from mailfathom.adapters.oauth.tokens import AccessTokens
from mailfathom.domain.errors import ConsentRequired
from mailfathom.domain.oauth import OAuthCredential, SaslMechanism

OAUTHBEARER_ERROR_REPLY = b"\x01"
XOAUTH2_ERROR_REPLY = b""


def choose_mechanism(wanted: SaslMechanism, offered: Iterable[str]) -> SaslMechanism:
    """The mechanism to present the token with, from the names the server announced
    (case-insensitive). `AUTO` takes OAUTHBEARER where announced, else XOAUTH2, which is
    also tried where the server announced neither (some announce mechanisms only after
    TLS, or not at all)."""
    if wanted is not SaslMechanism.AUTO:
        return wanted
    names = {name.upper() for name in offered}
    return SaslMechanism.OAUTHBEARER if "OAUTHBEARER" in names else SaslMechanism.XOAUTH2


def initial_response(
    mechanism: SaslMechanism, user: str, token: str, host: str, port: int
) -> bytes:
    """The client's first message, before any transfer encoding. OAUTHBEARER names the user
    as its authorization identity (RFC 5801 section 4, `=` and `,` escaped) and the server it
    speaks to."""
    if mechanism is SaslMechanism.OAUTHBEARER:
        identity = user.replace("=", "=3D").replace(",", "=2C")
        return (
            f"n,a={identity},\x01host={host}\x01port={port}\x01auth=Bearer {token}\x01\x01"
        ).encode()
    return f"user={user}\x01auth=Bearer {token}\x01\x01".encode()


def error_reply(mechanism: SaslMechanism) -> bytes:
    """What answers the server's error challenge, so it sends its final failure."""
    if mechanism is SaslMechanism.OAUTHBEARER:
        return OAUTHBEARER_ERROR_REPLY
    return XOAUTH2_ERROR_REPLY


@dataclass(frozen=True, slots=True)
class OAuthLogin:
    """How one account's connections get their access token, and say how the account's
    grant fared: a refused grant, a token a server accepted and a rotated refresh token its
    file would not take (or holds again) are reported to `health` (none: nothing is written
    down, as before a configuration exists)."""

    account_id: str
    credential: OAuthCredential
    tokens: AccessTokens = field(repr=False)
    health: GrantHealth | None = field(default=None, repr=False)

    def token(self) -> str:
        with self._reporting():
            return self.tokens.current(self.account_id, self.credential, self.health)

    def after_refusal(self, refused: str) -> str:
        with self._reporting():
            return self.tokens.after_refusal(self.account_id, self.credential, refused, self.health)

    def accepted(self) -> None:
        """The server accepted the token: whatever state the account was held in is over."""
        if self.health is not None:
            self.health.accepted(self.account_id)

    @contextmanager
    def _reporting(self) -> Iterator[None]:
        try:
            yield
        except ConsentRequired:
            if self.health is not None:
                self.health.refused(self.account_id)
            raise
