"""The `[McpEndpoint.OAuth]` table and the `Credential = "oauth"` caller entries it serves.

Every address is https (http only on a loopback host, for a server on the same machine), so
neither a token nor the keys it is checked with cross a network in the clear. A JWT signed
with a shared secret (HS*) or not at all (`none`) is never accepted, whatever is written.
Introspection asks one server, so it is accepted with one authorization server only; with
several, every caller entry names the issuer its subject belongs to, since a subject is
unique only within its issuer.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from mailfathom.adapters.config.toml_tables import Table
from mailfathom.adapters.config.values import SECURE_ADDRESS_RULE, bounded_integer, parse_secret
from mailfathom.domain import text_rules
from mailfathom.domain.access import Permission
from mailfathom.domain.connections import SecretRef
from mailfathom.domain.mcp_oauth import (
    ACCEPTED_TOKEN_ALGORITHMS,
    DEFAULT_CLOCK_SKEW_SECONDS,
    DEFAULT_JWKS_CACHE_SECONDS,
    DEFAULT_TOKEN_ALGORITHMS,
    MAX_CLOCK_SKEW_SECONDS,
    McpOAuthConfig,
    OAuthSubject,
    TokenValidation,
)
from mailfathom.domain.web_addresses import is_secure_address

_KEYS = frozenset(
    {
        "Resource",
        "AuthorizationServers",
        "TokenValidation",
        "JwksUri",
        "Audiences",
        "Algorithms",
        "IntrospectionEndpoint",
        "IntrospectionClientId",
        "IntrospectionClientSecret",
        "ClockSkewSeconds",
        "JwksCacheSeconds",
        "ScopePrefix",
        "RequiredScopes",
    }
)
_JWT_ONLY = ("JwksUri", "Algorithms", "JwksCacheSeconds")
_INTROSPECTION_ONLY = (
    "IntrospectionEndpoint",
    "IntrospectionClientId",
    "IntrospectionClientSecret",
)
_MAX_SERVERS = 8
_MAX_AUDIENCES = 8
_MAX_TEXT = 512
_MIN_JWKS_CACHE_SECONDS = 30
_MAX_JWKS_CACHE_SECONDS = 86400
_VALIDATIONS = {v.value: v for v in TokenValidation}
_REFUSED_ALGORITHMS = "a shared-secret (HS*) or unsigned (none) token is never accepted"


def parse_mcp_oauth(table: Table | None, base_dir: Path) -> McpOAuthConfig | None:
    if table is None:
        return None
    table.refuse_unknown(_KEYS)
    before = len(table.problems.items)
    resource = _address(table, "Resource", required=True)
    servers = _servers(table)
    text = table.string("TokenValidation")
    validation = _VALIDATIONS.get(text or "jwt")
    if validation is None:
        table.problems.add(table.at("TokenValidation"), 'must be "jwt" or "introspection"')
    if validation is not None:
        unused = _INTROSPECTION_ONLY if validation is TokenValidation.JWT else _JWT_ONLY
        for key in (k for k in unused if table.has(k)):
            table.problems.add(
                table.at(key), f'does not apply with TokenValidation = "{validation.value}"'
            )
    jwks_uri = _address(table, "JwksUri")
    if jwks_uri is not None and len(servers) > 1:
        table.problems.add(
            table.at("JwksUri"),
            "applies with one authorization server only; with several, each one's keys are "
            "found in its metadata",
        )
    client_id, client_secret = None, None
    if validation is TokenValidation.INTROSPECTION:
        client_id, client_secret = _introspection_client(table, base_dir)
        if len(servers) > 1:
            table.problems.add(
                table.at("AuthorizationServers"),
                'name one server with TokenValidation = "introspection"',
            )
    prefix = _scope_prefix(table)
    config = McpOAuthConfig(
        resource=resource or "",
        authorization_servers=servers,
        token_validation=validation or TokenValidation.JWT,
        jwks_uri=jwks_uri,
        audiences=_audiences(table),
        algorithms=_algorithms(table),
        introspection_endpoint=_address(table, "IntrospectionEndpoint"),
        introspection_client_id=client_id,
        introspection_client_secret=client_secret,
        clock_skew_seconds=_bounded(
            table, "ClockSkewSeconds", DEFAULT_CLOCK_SKEW_SECONDS, 0, MAX_CLOCK_SKEW_SECONDS
        ),
        jwks_cache_seconds=_bounded(
            table,
            "JwksCacheSeconds",
            DEFAULT_JWKS_CACHE_SECONDS,
            _MIN_JWKS_CACHE_SECONDS,
            _MAX_JWKS_CACHE_SECONDS,
        ),
        scope_prefix=prefix,
        required_scopes=_required_scopes(table, prefix),
    )
    return config if len(table.problems.items) == before else None


def _address(table: Table, key: str, *, required: bool = False) -> str | None:
    text = table.string(key, required=required)
    if text is None:
        return None
    if not is_secure_address(text):
        table.problems.add(table.at(key), SECURE_ADDRESS_RULE)
        return None
    return text


def _servers(table: Table) -> tuple[str, ...]:
    key = "AuthorizationServers"
    names = table.strings(key)
    if names is None:
        if not table.has(key):
            table.problems.add(table.at(key), "is required: the issuers whose tokens are accepted")
        return ()
    if not 1 <= len(names) <= _MAX_SERVERS:
        table.problems.add(table.at(key), f"must name from 1 to {_MAX_SERVERS} issuers")
    if len(set(names)) != len(names):
        table.problems.add(table.at(key), "names an issuer twice")
    for index, name in enumerate(names):
        if not is_secure_address(name):
            table.problems.add(f"{table.at(key)}[{index}]", SECURE_ADDRESS_RULE)
    return tuple(dict.fromkeys(names))


def _audiences(table: Table) -> tuple[str, ...]:
    key = "Audiences"
    values = table.strings(key)
    if values is None:
        return ()
    if len(values) > _MAX_AUDIENCES:
        table.problems.add(table.at(key), f"must name at most {_MAX_AUDIENCES} audiences")
    for index, value in enumerate(values):
        if not _plain_text(value):
            table.problems.add(
                f"{table.at(key)}[{index}]",
                f"must be 1 to {_MAX_TEXT} characters without spaces or control characters",
            )
    return tuple(dict.fromkeys(values))


def _algorithms(table: Table) -> tuple[str, ...]:
    key = "Algorithms"
    names = table.strings(key)
    if names is None:
        return DEFAULT_TOKEN_ALGORITHMS
    if not names:
        table.problems.add(table.at(key), "must name at least one algorithm")
    for index, name in enumerate(names):
        if name.lower() == "none" or name.upper().startswith("HS"):
            table.problems.add(f"{table.at(key)}[{index}]", _REFUSED_ALGORITHMS)
        elif name not in ACCEPTED_TOKEN_ALGORITHMS:
            table.problems.add(
                f"{table.at(key)}[{index}]",
                f"names no accepted algorithm; accepted: {', '.join(ACCEPTED_TOKEN_ALGORITHMS)}",
            )
    return tuple(dict.fromkeys(names))


def _introspection_client(table: Table, base_dir: Path) -> tuple[str | None, SecretRef | None]:
    client_id = table.string("IntrospectionClientId", required=True)
    if client_id is not None and not _plain_text(client_id):
        table.problems.add(
            table.at("IntrospectionClientId"),
            f"must be 1 to {_MAX_TEXT} characters without spaces or control characters",
        )
    secret = None
    if table.has("IntrospectionClientSecret"):
        secret = parse_secret(table, "IntrospectionClientSecret", base_dir)
    else:
        table.problems.add(
            table.at("IntrospectionClientSecret"),
            'is required with TokenValidation = "introspection"; write '
            'IntrospectionClientSecret = { Env = "VARIABLE" } or { File = "path" }',
        )
    return client_id, secret


def _bounded(table: Table, key: str, default: int, least: int, most: int) -> int:
    return bounded_integer(table, key, default, least, most, unit=" seconds")


def _scope_prefix(table: Table) -> str:
    text = table.string("ScopePrefix")
    if text is None:
        return ""
    if not _plain_text(text):
        table.problems.add(
            table.at("ScopePrefix"),
            f"must be 1 to {_MAX_TEXT} characters without spaces or control characters",
        )
        return ""
    return text


def _required_scopes(table: Table, prefix: str) -> tuple[Permission, ...]:
    """Written as permission names, as `Permissions` are; the prefix is the endpoint's to add
    wherever it names a scope, so a name written with it is refused rather than guessed at."""
    key = "RequiredScopes"
    names = table.strings(key)
    if names is None:
        return ()
    chosen = set()
    for index, name in enumerate(names):
        permission = Permission.parse(name)
        if permission is not None:
            chosen.add(permission)
        elif prefix and name.startswith(prefix) and Permission.parse(name[len(prefix) :]):
            table.problems.add(
                f"{table.at(key)}[{index}]",
                "write the permission name without ScopePrefix, which is added wherever the "
                "scope is advertised",
            )
        else:
            table.problems.add(
                f"{table.at(key)}[{index}]",
                f"names no permission; accepted: {', '.join(p.value for p in Permission)}",
            )
    return tuple(p for p in Permission if p in chosen)


def _plain_text(text: str) -> bool:
    return (
        0 < len(text) <= _MAX_TEXT
        and text_rules.is_name(text)
        and not any(c.isspace() for c in text)
    )


def parse_oauth_subject(
    entry: Table, oauth: McpOAuthConfig | None, oauth_written: bool
) -> OAuthSubject | None:
    """The subject a `Credential = "oauth"` entry admits, or None after recording why not."""
    problems = entry.problems
    if not oauth_written:
        problems.add(
            entry.at("Credential"),
            '"oauth" needs an [McpEndpoint.OAuth] table naming the authorization servers',
        )
    subject = entry.string("Subject", required=True)
    if subject is not None and not (0 < len(subject) <= _MAX_TEXT and text_rules.is_name(subject)):
        problems.add(
            entry.at("Subject"), f"must be 1 to {_MAX_TEXT} characters without control characters"
        )
    issuer = entry.string("Issuer")
    servers: Sequence[str] = oauth.authorization_servers if oauth is not None else ()
    if issuer is not None and oauth is not None and issuer not in servers:
        problems.add(entry.at("Issuer"), "must be one of McpEndpoint.OAuth.AuthorizationServers")
    if issuer is None and len(servers) > 1:
        problems.add(
            entry.at("Issuer"),
            "is required when several authorization servers are named: a subject is unique "
            "only within its issuer",
        )
    narrowed = entry.boolean("PermissionsFromTokenScopes", True)
    if subject is None:
        return None
    return OAuthSubject(subject=subject, issuer=issuer, permissions_from_token_scopes=narrowed)
