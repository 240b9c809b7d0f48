"""Whom an access token is served as.

The token's issuer and subject name one `Credential = "oauth"` caller entry; the caller is
that entry, with its categories, confirmation rule and send ceilings, exactly as an API-key
caller of the entry would be. Where the entry reads its permissions from token scopes, the
caller holds the entry's permissions that the token's scopes also name, so a person who
consented to reading only is served reading only.

A good token naming no entry's subject is refused with 403 and no challenge: the holder
proved who they are, and signing in again as the same person changes nothing, whereas a 401
would send a client through the authorization flow again on every request. A token lacking
one of the endpoint's `RequiredScopes` is refused with 403 `insufficient_scope` naming all of
them, whatever its entry serves, so a client can ask the person for them (RFC 6750 section
3.1). Otherwise a token whose scopes carry nothing the entry grants is admitted holding
nothing, and is served an empty listing, as the contract says of an entry whose surface is a
ceiling.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import structlog
from mcp.server.auth.provider import AccessToken, TokenVerifier

from mailfathom.domain.access import ALL_PERMISSIONS, Caller, Permission
from mailfathom.domain.config import CallerEntry
from mailfathom.domain.mcp_oauth import McpOAuthConfig

log = structlog.get_logger("mailfathom.mcp")


@dataclass(frozen=True, slots=True)
class Admitted:
    caller: Caller
    token: AccessToken


@dataclass(frozen=True, slots=True)
class Refused:
    """`reason` is one of `invalidToken`, `insufficientScope`, `notAdmitted`; `scopes` the
    required scopes, with `insufficientScope`."""

    reason: str
    scopes: tuple[str, ...] = ()


class TokenAdmission:
    """`published` holds, for each tool the endpoint publishes, the permissions it needs."""

    def __init__(
        self,
        config: McpOAuthConfig,
        entries: Sequence[CallerEntry],
        verifier: TokenVerifier,
        published: Sequence[frozenset[Permission]],
    ) -> None:
        self.config = config
        self._verifier = verifier
        self._published = list(published)
        self._entries = {
            (e.oauth.issuer, e.oauth.subject): e for e in entries if e.oauth is not None
        }

    def scopes_supported(self) -> list[str]:
        """Every scope some published tool needs, and every required one, in the order
        permissions are declared."""
        needed = {p for ps in self._published for p in ps} | set(self.config.required_scopes)
        return [self.config.scope_name(p) for p in Permission if p in needed]

    async def admit(self, token: str) -> Admitted | Refused:
        """Raises `AuthorizationServerUnavailable` when the issuer cannot be asked."""
        found = await self._verifier.verify_token(token)
        if found is None:
            return Refused("invalidToken")
        issuer = (found.claims or {}).get("iss")
        entry = self._entries.get((issuer, found.subject or "")) or self._entries.get(
            (None, found.subject or "")
        )
        if entry is None:
            log.info("oauth.token_refused", reason="no entry names the subject")
            return Refused("notAdmitted")
        carried = self.config.permissions_of(frozenset(found.scopes))
        if not set(self.config.required_scopes) <= carried:
            log.info("oauth.token_refused", reason="a required scope is missing", caller=entry.name)
            return Refused("insufficientScope", self.config.required_scope_names())
        ceiling = entry.permissions if entry.permissions is not None else ALL_PERMISSIONS
        permissions = ceiling
        if entry.oauth is not None and entry.oauth.permissions_from_token_scopes:
            permissions = ceiling & carried
        caller = Caller(
            permissions=frozenset(permissions), label=entry.name, confirmation=entry.confirmation
        )
        return Admitted(caller, found)
