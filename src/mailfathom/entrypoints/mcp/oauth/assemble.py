"""Building the token admission an `[McpEndpoint.OAuth]` table describes."""

from __future__ import annotations

from collections.abc import Sequence

from mailfathom.bootstrap import read_secret
from mailfathom.domain.access import Permission
from mailfathom.domain.config import McpEndpointConfig
from mailfathom.domain.mcp_oauth import TokenValidation
from mailfathom.entrypoints.mcp.oauth.admission import TokenAdmission
from mailfathom.entrypoints.mcp.oauth.authorization_server import AuthorizationServerClient
from mailfathom.entrypoints.mcp.oauth.introspection import IntrospectionTokenVerifier
from mailfathom.entrypoints.mcp.oauth.jwt_tokens import JwtTokenVerifier


def token_admission(
    config: McpEndpointConfig,
    client: AuthorizationServerClient,
    published: Sequence[frozenset[Permission]],
) -> TokenAdmission | None:
    """None when the endpoint accepts no access tokens."""
    oauth = config.oauth
    if oauth is None:
        return None
    verifier: JwtTokenVerifier | IntrospectionTokenVerifier
    if oauth.token_validation is TokenValidation.INTROSPECTION:
        secret = oauth.introspection_client_secret
        assert secret is not None, "the configuration requires it with introspection"
        verifier = IntrospectionTokenVerifier(oauth, client, lambda: read_secret(secret))
    else:
        verifier = JwtTokenVerifier(oauth, client)
    return TokenAdmission(oauth, config.callers, verifier, published)
