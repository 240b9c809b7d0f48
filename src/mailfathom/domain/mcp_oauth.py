"""The MCP endpoint as an OAuth 2.1 resource server, as values.

A hosted MCP client signs a person in at an authorization server the operator trusts and
presents the access token it was issued as a bearer token. The endpoint checks that the
token was issued by one of the configured servers, for this endpoint (its audience is the
endpoint's resource URI, RFC 8707), and is current within a bounded clock skew; then the
token's subject names the configured caller entry it is served as, and its scopes narrow
that entry's grant. Scope names are the permission names of `domain.access`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from mailfathom.domain.access import Permission
from mailfathom.domain.connections import SecretRef


class TokenValidation(enum.Enum):
    """How a token is checked: as a signed JWT against the issuer's published keys, or by
    asking the issuer (RFC 7662 token introspection), which also sees revocation."""

    JWT = "jwt"
    INTROSPECTION = "introspection"


# Asymmetric signatures only: a shared-secret algorithm (HS*) would let whoever can check a
# token also mint one, and `none` checks nothing.
ACCEPTED_TOKEN_ALGORITHMS = (
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
    "ES256",
    "ES384",
    "ES512",
    "EdDSA",
)
DEFAULT_TOKEN_ALGORITHMS = tuple(a for a in ACCEPTED_TOKEN_ALGORITHMS if a != "EdDSA")
DEFAULT_CLOCK_SKEW_SECONDS = 60
MAX_CLOCK_SKEW_SECONDS = 300
DEFAULT_JWKS_CACHE_SECONDS = 600


@dataclass(frozen=True, slots=True)
class McpOAuthConfig:
    """`[McpEndpoint.OAuth]`.

    `resource` is the endpoint's canonical URI as clients reach it (behind a reverse proxy,
    the public one); tokens must name it, or one of `audiences`, in `aud`.
    `authorization_servers` are the issuers whose tokens are accepted, compared with `iss`
    exactly. `jwks_uri` and `introspection_endpoint` are read from each issuer's metadata
    (RFC 8414, or OpenID Connect discovery) when not given. `scope_prefix` is written before
    every permission name the endpoint advertises as a scope, for a server that qualifies
    scopes by the resource they belong to; a token's scope is read with or without it.
    `required_scopes` are permissions every token's scopes must carry, whatever its entry
    serves; a token lacking one is refused and told to ask for them, in declared order."""

    resource: str
    authorization_servers: tuple[str, ...]
    token_validation: TokenValidation = TokenValidation.JWT
    jwks_uri: str | None = None
    audiences: tuple[str, ...] = ()
    algorithms: tuple[str, ...] = DEFAULT_TOKEN_ALGORITHMS
    introspection_endpoint: str | None = None
    introspection_client_id: str | None = None
    introspection_client_secret: SecretRef | None = None
    clock_skew_seconds: int = DEFAULT_CLOCK_SKEW_SECONDS
    jwks_cache_seconds: int = DEFAULT_JWKS_CACHE_SECONDS
    scope_prefix: str = ""
    required_scopes: tuple[Permission, ...] = ()

    @property
    def accepted_audiences(self) -> tuple[str, ...]:
        return (self.resource, *self.audiences)

    def scope_name(self, permission: Permission) -> str:
        """The scope a client asks for to be granted `permission`."""
        return self.scope_prefix + permission.value

    def required_scope_names(self) -> tuple[str, ...]:
        return tuple(self.scope_name(p) for p in self.required_scopes)

    def permissions_of(self, scopes: frozenset[str]) -> frozenset[Permission]:
        """The permissions a token's scopes carry; a scope naming none carries nothing."""
        found = set()
        for scope in scopes:
            name = scope
            if self.scope_prefix and scope.startswith(self.scope_prefix):
                name = scope[len(self.scope_prefix) :]
            permission = Permission.parse(name)
            if permission is not None:
                found.add(permission)
        return frozenset(found)


@dataclass(frozen=True, slots=True)
class OAuthSubject:
    """Who a `Credential = "oauth"` caller entry admits: the token's `sub`, from `issuer`
    (None: any configured issuer, allowed only where one is configured). With
    `permissions_from_token_scopes` the entry's grant is a ceiling and each token holds only
    the permissions its scopes carry; without it the entry's grant is served as written."""

    subject: str
    issuer: str | None = None
    permissions_from_token_scopes: bool = True
