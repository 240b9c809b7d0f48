"""The [McpEndpoint.OAuth] table and the caller entries admitting an access token's subject."""

from __future__ import annotations

from typing import Any

import pytest

from config.test_config_loading import imap_account, parse, problems_of
from config.test_mcp_endpoint_config import keyed
from mailfathom.domain.access import Permission
from mailfathom.domain.config import CallerEntry
from mailfathom.domain.mcp_oauth import (
    DEFAULT_TOKEN_ALGORITHMS,
    McpOAuthConfig,
    OAuthSubject,
    TokenValidation,
)

RESOURCE = "https://mail.example.com/mcp"
ISSUER = "https://login.example.com/realms/mail"
OTHER_ISSUER = "https://tenant.example.net/"


def oauth(**overrides: Any) -> dict[str, Any]:
    return {"Resource": RESOURCE, "AuthorizationServers": [ISSUER], **overrides}


def person(name: str = "person", **overrides: Any) -> dict[str, Any]:
    return {"Name": name, "Credential": "oauth", "Subject": "f3a1-77", **overrides}


def endpoint(table: dict[str, Any] | None = None, *callers: dict[str, Any]) -> dict[str, Any]:
    section: dict[str, Any] = {"Enabled": True, "Callers": list(callers) or [person()]}
    if table is not None:
        section["OAuth"] = table
    return {"Accounts": [imap_account()], "McpEndpoint": section}


def test_a_token_subject_is_admitted_beside_an_api_key() -> None:
    config = parse(
        endpoint(
            oauth(Audiences=["api://6d1c"], ClockSkewSeconds=30, ScopePrefix="api://6d1c/"),
            person(Permissions=["mailfathom.mail.read"], Confirmation="ask"),
            keyed(),
        )
    )
    assert config.mcp.oauth == McpOAuthConfig(
        resource=RESOURCE,
        authorization_servers=(ISSUER,),
        audiences=("api://6d1c",),
        clock_skew_seconds=30,
        scope_prefix="api://6d1c/",
    )
    assert config.mcp.oauth.token_validation is TokenValidation.JWT
    assert config.mcp.oauth.algorithms == DEFAULT_TOKEN_ALGORITHMS
    entry = config.mcp.callers[0]
    assert entry.oauth == OAuthSubject("f3a1-77", None, True)
    assert entry.permissions == frozenset({Permission.MAIL_READ})
    assert not entry.is_open
    assert config.mcp.callers[1] == CallerEntry("agent", keyed()["ApiKeySha256"])


def test_required_scopes_are_permission_names_kept_in_declared_order() -> None:
    table = oauth(
        ScopePrefix="api://6d1c/",
        RequiredScopes=["mailfathom.mail.send", "mailfathom.mail.read", "mailfathom.mail.read"],
    )
    settings = parse(endpoint(table)).mcp.oauth
    assert settings is not None
    assert settings.required_scopes == (Permission.MAIL_READ, Permission.SEND)
    # Advertised and challenged with the prefix.
    assert [settings.scope_name(p) for p in settings.required_scopes] == [
        "api://6d1c/mailfathom.mail.read",
        "api://6d1c/mailfathom.mail.send",
    ]


def test_no_scope_is_required_unless_written() -> None:
    settings = parse(endpoint(oauth())).mcp.oauth
    assert settings is not None
    assert settings.required_scopes == ()


def test_introspection_reads_its_client_and_secret_reference() -> None:
    table = oauth(
        TokenValidation="introspection",
        IntrospectionEndpoint="https://login.example.com/introspect",
        IntrospectionClientId="mailfathom",
        IntrospectionClientSecret={"Env": "MF_INTROSPECTION_SECRET"},
    )
    settings = parse(endpoint(table)).mcp.oauth
    assert settings is not None
    assert settings.token_validation is TokenValidation.INTROSPECTION
    assert settings.introspection_client_id == "mailfathom"
    assert settings.introspection_client_secret is not None
    assert settings.introspection_client_secret.env == "MF_INTROSPECTION_SECRET"


def test_several_issuers_each_entry_naming_its_own() -> None:
    config = parse(
        endpoint(
            oauth(AuthorizationServers=[ISSUER, OTHER_ISSUER]),
            person(Issuer=ISSUER),
            person("guest", Issuer=OTHER_ISSUER, PermissionsFromTokenScopes=False),
        )
    )
    assert [c.oauth for c in config.mcp.callers] == [
        OAuthSubject("f3a1-77", ISSUER),
        OAuthSubject("f3a1-77", OTHER_ISSUER, permissions_from_token_scopes=False),
    ]


def test_entries_admitting_tokens_are_not_open_entries() -> None:
    # Neither carries an API key digest; neither admits a caller presenting nothing.
    config = parse(endpoint(oauth(), person(), person("second", Subject="b-2")))
    assert len(config.mcp.callers) == 2


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        (endpoint(oauth(Resource="http://mail.example.com/mcp")), "OAuth.Resource: must be"),
        (endpoint(oauth(Resource="https://mail.example.com/mcp#x")), "OAuth.Resource: must be"),
        (endpoint({"AuthorizationServers": [ISSUER]}), "OAuth.Resource: is required"),
        (endpoint({"Resource": RESOURCE}), "OAuth.AuthorizationServers: is required"),
        (endpoint(oauth(AuthorizationServers=[])), "must name from 1 to 8 issuers"),
        (
            endpoint(oauth(AuthorizationServers=[f"https://i{n}.example" for n in range(9)])),
            "must name from 1 to 8 issuers",
        ),
        (endpoint(oauth(AuthorizationServers=[ISSUER, ISSUER])), "names an issuer twice"),
        (
            endpoint(oauth(AuthorizationServers=["http://login.example.com"])),
            "OAuth.AuthorizationServers[0]: must be an absolute https://",
        ),
        (endpoint(oauth(TokenValidation="opaque")), 'must be "jwt" or "introspection"'),
        (endpoint(oauth(Algorithms=["HS256"])), "Algorithms[0]: a shared-secret (HS*)"),
        (endpoint(oauth(Algorithms=["none"])), "Algorithms[0]: a shared-secret (HS*)"),
        (endpoint(oauth(Algorithms=["RS257"])), "Algorithms[0]: names no accepted algorithm"),
        (endpoint(oauth(Algorithms=[])), "Algorithms: must name at least one"),
        (endpoint(oauth(ClockSkewSeconds=301)), "ClockSkewSeconds: must be from 0 to 300"),
        (endpoint(oauth(ClockSkewSeconds=-1)), "ClockSkewSeconds: must be from 0 to 300"),
        (endpoint(oauth(JwksCacheSeconds=5)), "JwksCacheSeconds: must be from 30 to 86400"),
        (endpoint(oauth(JwksUri="ftp://keys.example")), "OAuth.JwksUri: must be"),
        (
            endpoint(
                oauth(AuthorizationServers=[ISSUER, OTHER_ISSUER], JwksUri=ISSUER + "/certs"),
                person(Issuer=ISSUER),
            ),
            "OAuth.JwksUri: applies with one authorization server only",
        ),
        (
            endpoint(oauth(TokenValidation="introspection", JwksUri=ISSUER + "/certs")),
            'OAuth.JwksUri: does not apply with TokenValidation = "introspection"',
        ),
        (
            endpoint(oauth(IntrospectionClientId="mailfathom")),
            'OAuth.IntrospectionClientId: does not apply with TokenValidation = "jwt"',
        ),
        (
            endpoint(oauth(TokenValidation="introspection")),
            "OAuth.IntrospectionClientId: is required",
        ),
        (
            endpoint(oauth(TokenValidation="introspection", IntrospectionClientId="m")),
            "OAuth.IntrospectionClientSecret: is required",
        ),
        (
            endpoint(
                oauth(
                    TokenValidation="introspection",
                    IntrospectionClientId="m",
                    IntrospectionClientSecret="plain-secret",
                )
            ),
            "OAuth.IntrospectionClientSecret: a secret is not accepted in the file",
        ),
        (
            endpoint(
                oauth(
                    AuthorizationServers=[ISSUER, OTHER_ISSUER],
                    TokenValidation="introspection",
                    IntrospectionClientId="m",
                    IntrospectionClientSecret={"Env": "X"},
                ),
                person(Issuer=ISSUER),
            ),
            'name one server with TokenValidation = "introspection"',
        ),
        (endpoint(oauth(Audiences=["api://x y"])), "OAuth.Audiences[0]: must be 1 to 512"),
        (endpoint(oauth(ScopePrefix="")), "OAuth.ScopePrefix: must be 1 to 512"),
        (
            endpoint(oauth(RequiredScopes=["mailfathom.mail.write"])),
            "OAuth.RequiredScopes[0]: names no permission; accepted: mailfathom.mail.read,",
        ),
        (
            endpoint(
                oauth(ScopePrefix="api://x/", RequiredScopes=["api://x/mailfathom.mail.read"])
            ),
            "OAuth.RequiredScopes[0]: write the permission name without ScopePrefix",
        ),
        (endpoint(oauth(RequiredScopes="mailfathom.mail.read")), "must be an array of strings"),
        (endpoint(oauth(Issuer=ISSUER)), "McpEndpoint.OAuth.Issuer: unknown key"),
        (endpoint(None, person()), '"oauth" needs an [McpEndpoint.OAuth] table'),
        (endpoint(oauth(), person(Subject=None)), "Callers[0].Subject: is required"),
        (endpoint(oauth(), person(Subject="a\nb")), "Callers[0].Subject: must be 1 to 512"),
        (
            endpoint(oauth(), person(ApiKeySha256=keyed()["ApiKeySha256"])),
            'Callers[0].ApiKeySha256: does not apply with Credential = "oauth"',
        ),
        (
            endpoint(oauth(), keyed(Subject="f3a1-77")),
            'Callers[0].Subject: applies only with Credential = "oauth"',
        ),
        (
            endpoint(oauth(), keyed(PermissionsFromTokenScopes=False)),
            'Callers[0].PermissionsFromTokenScopes: applies only with Credential = "oauth"',
        ),
        (
            endpoint(oauth(), person(Issuer=OTHER_ISSUER)),
            "Callers[0].Issuer: must be one of McpEndpoint.OAuth.AuthorizationServers",
        ),
        (
            endpoint(oauth(AuthorizationServers=[ISSUER, OTHER_ISSUER]), person()),
            "Callers[0].Issuer: is required when several authorization servers are named",
        ),
        (
            endpoint(oauth(), person(), person("again")),
            "two entries admit the same token subject",
        ),
        (endpoint(oauth(), keyed(Credential="token")), 'must be "apiKey", "oauth" or "none"'),
        (
            endpoint(oauth(), person(), {"Name": "desk", "Credential": "none"}),
            'Callers[1].Credential: "none" is refused when McpEndpoint.OAuth.Resource is not',
        ),
    ],
)
def test_every_mistake_is_a_problem_naming_the_key(document: dict[str, Any], expected: str) -> None:
    callers = document["McpEndpoint"]["Callers"]
    for caller in callers:
        if caller.get("Subject", "") is None:
            del caller["Subject"]
    problems = problems_of(document)
    assert any(expected in p for p in problems), problems
    assert not any("plain-secret" in p for p in problems)


def test_an_unreadable_oauth_table_adds_no_second_problem_to_its_entries() -> None:
    problems = problems_of(endpoint(oauth(Resource="http://mail.example.com/mcp"), person()))
    assert len(problems) == 1, problems


def test_an_open_entry_stays_allowed_when_the_resource_is_on_loopback() -> None:
    table = oauth(Resource="http://127.0.0.1:8625/mcp")
    config = parse(endpoint(table, person(), {"Name": "desk", "Credential": "none"}))
    assert [c.is_open for c in config.mcp.callers] == [False, True]
