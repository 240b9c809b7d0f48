"""An account's `[Accounts.OAuth]` block: the registered client, the refresh token, and where
tokens come from.

A named provider brings its endpoints and scopes (`domain/oauth_providers.py`); any of them
may still be written out, which replaces the preset's value. A generic provider names its
token endpoint and scopes itself. Every endpoint is `https://`, or `http://` on a loopback
host, for the reason `Tls = "none"` is: the refresh token and the client secret cross it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from mailfathom.adapters.config.toml_tables import Table
from mailfathom.adapters.config.values import parse_enum
from mailfathom.domain import text_rules
from mailfathom.domain.config import SecretRef
from mailfathom.domain.oauth import OAuthCredential, OAuthProvider, SaslMechanism
from mailfathom.domain.oauth_providers import DEFAULT_TENANT, TENANT, provider_preset
from mailfathom.domain.web_addresses import endpoint_problem

SecretParser = Callable[[Table, str], SecretRef | None]

OAUTH_KEYS = frozenset(
    {
        "Provider",
        "ClientId",
        "ClientSecret",
        "RefreshToken",
        "TokenEndpoint",
        "Scopes",
        "Tenant",
        "DeviceAuthorizationEndpoint",
        "AuthorizationEndpoint",
        "RevocationEndpoint",
        "Mechanism",
        "RefreshMarginSeconds",
    }
)
_ENDPOINT_KEYS = (
    "TokenEndpoint",
    "DeviceAuthorizationEndpoint",
    "AuthorizationEndpoint",
    "RevocationEndpoint",
)
# RFC 6749 section 3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
_SCOPE_TOKEN = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+")
_CLIENT_ID_LIMIT = 512
_MARGIN_LIMIT = 3600.0
_SCOPES_LIMIT = 32


def parse_oauth(table: Table, parse_secret: SecretParser) -> OAuthCredential | None:
    problems = table.problems
    before = len(problems.items)
    table.refuse_unknown(OAUTH_KEYS)

    provider = parse_enum(table, "Provider", OAuthProvider, required=True)
    tenant = table.string("Tenant")
    if tenant is not None:
        if provider is not None and provider is not OAuthProvider.MICROSOFT:
            problems.add(table.at("Tenant"), 'is read only with Provider = "microsoft"')
        elif not TENANT.fullmatch(tenant):
            problems.add(
                table.at("Tenant"),
                'must be "common", "organizations", "consumers", a directory id or a domain name',
            )
            tenant = None

    client_id = table.string("ClientId", required=True)
    if client_id is not None and not _is_client_id(client_id):
        problems.add(
            table.at("ClientId"),
            f"must be 1 to {_CLIENT_ID_LIMIT} characters, no spaces or control characters",
        )

    refresh_token = None
    if table.has("RefreshToken"):
        refresh_token = parse_secret(table, "RefreshToken")
    else:
        problems.add(
            table.at("RefreshToken"),
            'is required: RefreshToken = { File = "path" } or { Env = "VARIABLE" } '
            "(mailfathom init writes it)",
        )
    client_secret = parse_secret(table, "ClientSecret") if table.has("ClientSecret") else None

    endpoints = {key: _endpoint(table, key) for key in _ENDPOINT_KEYS}
    scopes = _scopes(table)
    mechanism = parse_enum(table, "Mechanism", SaslMechanism) or SaslMechanism.AUTO
    margin = table.number("RefreshMarginSeconds")
    if margin is not None and not 0 <= margin <= _MARGIN_LIMIT:
        problems.add(table.at("RefreshMarginSeconds"), f"must be from 0 to {_MARGIN_LIMIT:g}")

    if provider is OAuthProvider.GENERIC:
        for key in ("TokenEndpoint", "Scopes"):
            if not table.has(key):
                problems.add(table.at(key), 'is required with Provider = "generic"')
    preset = None
    if provider is not None and provider is not OAuthProvider.GENERIC:
        preset = provider_preset(provider, tenant or DEFAULT_TENANT)

    if len(problems.items) != before or provider is None or client_id is None:
        return None
    assert refresh_token is not None
    token_endpoint = endpoints["TokenEndpoint"] or (preset.token_endpoint if preset else None)
    scopes = scopes or (preset.scopes if preset else None)
    assert token_endpoint is not None
    assert scopes is not None
    return OAuthCredential(
        provider=provider,
        client_id=client_id,
        refresh_token=refresh_token,
        token_endpoint=token_endpoint,
        scopes=scopes,
        client_secret=client_secret,
        device_authorization_endpoint=endpoints["DeviceAuthorizationEndpoint"]
        or (preset.device_authorization_endpoint if preset else None),
        authorization_endpoint=endpoints["AuthorizationEndpoint"]
        or (preset.authorization_endpoint if preset else None),
        revocation_endpoint=endpoints["RevocationEndpoint"]
        or (preset.revocation_endpoint if preset else None),
        mechanism=mechanism,
        refresh_margin_seconds=60.0 if margin is None else margin,
    )


def _is_client_id(text: str) -> bool:
    return (
        0 < len(text) <= _CLIENT_ID_LIMIT
        and text_rules.is_name(text)
        and not any(char.isspace() for char in text)
    )


def _endpoint(table: Table, key: str) -> str | None:
    text = table.string(key)
    if text is None:
        return None
    rule = endpoint_problem(text)
    if rule is not None:
        table.problems.add(table.at(key), rule)
        return None
    return text


def _scopes(table: Table) -> tuple[str, ...] | None:
    values = table.strings("Scopes")
    if values is None:
        return None
    if not 1 <= len(values) <= _SCOPES_LIMIT:
        table.problems.add(table.at("Scopes"), f"must list 1 to {_SCOPES_LIMIT} scopes")
        return None
    ok = True
    for index, scope in enumerate(values):
        if not _SCOPE_TOKEN.fullmatch(scope):
            table.problems.add(
                f"{table.at('Scopes')}[{index}]",
                "must be one scope: printable ASCII without spaces, quotes or backslashes",
            )
            ok = False
    if len(set(values)) != len(values):
        table.problems.add(table.at("Scopes"), "repeats a scope")
        ok = False
    return tuple(values) if ok else None
