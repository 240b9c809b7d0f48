"""Accounts that log in with OAuth 2.0: `Imap.Auth`, `Delivery.Smtp.Auth` and `[Accounts.OAuth]`."""

from __future__ import annotations

from typing import Any

import pytest

from config.test_config_loading import BASE_DIR, imap_account, parse, problems_of
from mailfathom.adapters.config.secrets import (
    require_secrets,
    secrets_to_deliver,
    secrets_to_synchronize,
)
from mailfathom.domain.config import SecretRef, TlsMode
from mailfathom.domain.delivery_config import SmtpConnection
from mailfathom.domain.errors import SecretUnavailable
from mailfathom.domain.oauth import ConnectionAuth, OAuthCredential, OAuthProvider, SaslMechanism
from mailfathom.domain.oauth_providers import GMAIL_SCOPES, MICROSOFT_SCOPES


def oauth_account(
    oauth: dict[str, Any] | None = None, *, imap_auth: str = "oauth2", **overrides: Any
) -> dict[str, Any]:
    account = imap_account(**overrides)
    account["Imap"] = {k: v for k, v in account["Imap"].items() if k != "Secret"}
    account["Imap"]["Auth"] = imap_auth
    if imap_auth == "password":
        account["Imap"]["Secret"] = {"Env": "WORK_IMAP_PASSWORD"}
    if oauth is not None:
        account["OAuth"] = oauth
    return account


GMAIL = {
    "Provider": "gmail",
    "ClientId": "1234.apps.example",
    "RefreshToken": {"File": "secrets/work.refresh"},
}


def test_a_gmail_account_takes_the_providers_endpoints_and_least_scopes() -> None:
    account = parse({"Accounts": [oauth_account(GMAIL)]}).accounts[0]
    assert account.imap is not None
    assert account.imap.auth is ConnectionAuth.OAUTH2
    assert account.imap.secret is None
    assert account.oauth == OAuthCredential(
        provider=OAuthProvider.GMAIL,
        client_id="1234.apps.example",
        refresh_token=SecretRef(file=BASE_DIR / "secrets/work.refresh"),
        token_endpoint="https://oauth2.googleapis.com/token",
        scopes=GMAIL_SCOPES,
        authorization_endpoint="https://accounts.google.com/o/oauth2/v2/auth",
        revocation_endpoint="https://oauth2.googleapis.com/revoke",
    )
    assert GMAIL_SCOPES == ("https://mail.google.com/",)


def test_a_microsoft_account_puts_its_tenant_in_every_endpoint() -> None:
    oauth = {**GMAIL, "Provider": "microsoft", "Tenant": "contoso.onmicrosoft.com"}
    credential = parse({"Accounts": [oauth_account(oauth)]}).accounts[0].oauth
    assert credential is not None
    base = "https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0"
    assert credential.token_endpoint == f"{base}/token"
    assert credential.device_authorization_endpoint == f"{base}/devicecode"
    assert credential.authorization_endpoint == f"{base}/authorize"
    assert credential.scopes == MICROSOFT_SCOPES
    assert "offline_access" in credential.scopes


def test_a_microsoft_tenant_defaults_to_common() -> None:
    oauth = {**GMAIL, "Provider": "microsoft"}
    credential = parse({"Accounts": [oauth_account(oauth)]}).accounts[0].oauth
    assert credential is not None
    assert credential.token_endpoint == (
        "https://login.microsoftonline.com/common/oauth2/v2.0/token"
    )


def test_a_generic_provider_names_everything_and_a_loopback_endpoint_may_be_http() -> None:
    oauth = {
        "Provider": "generic",
        "ClientId": "mailfathom",
        "ClientSecret": {"Env": "OAUTH_CLIENT_SECRET"},
        "RefreshToken": {"Env": "OAUTH_REFRESH"},
        "TokenEndpoint": "http://127.0.0.1:8400/oauth/token",
        "DeviceAuthorizationEndpoint": "http://localhost:8400/oauth/device",
        "Scopes": ["mail", "offline"],
        "Mechanism": "oauthbearer",
        "RefreshMarginSeconds": 5,
    }
    smtp = {"Host": "127.0.0.1", "Tls": "none", "Auth": "oauth2", "Username": "me"}
    document = {"Accounts": [oauth_account(oauth, Delivery={"Enabled": True, "Smtp": smtp})]}
    account = parse(document).accounts[0]
    assert account.oauth == OAuthCredential(
        provider=OAuthProvider.GENERIC,
        client_id="mailfathom",
        refresh_token=SecretRef(env="OAUTH_REFRESH"),
        token_endpoint="http://127.0.0.1:8400/oauth/token",
        scopes=("mail", "offline"),
        client_secret=SecretRef(env="OAUTH_CLIENT_SECRET"),
        device_authorization_endpoint="http://localhost:8400/oauth/device",
        mechanism=SaslMechanism.OAUTHBEARER,
        refresh_margin_seconds=5.0,
    )
    assert account.delivery is not None
    assert account.delivery.smtp == SmtpConnection(
        host="127.0.0.1",
        port=25,
        username="me",
        secret=None,
        tls=TlsMode.NONE,
        auth=ConnectionAuth.OAUTH2,
    )


def test_only_the_submission_server_may_log_in_with_oauth() -> None:
    smtp = {"Host": "smtp.gmail.com", "Auth": "oauth2", "Username": "me@gmail.com"}
    account = oauth_account(GMAIL, imap_auth="password", Delivery={"Smtp": smtp})
    parsed = parse({"Accounts": [account]}).accounts[0]
    assert parsed.imap is not None
    assert parsed.imap.auth is ConnectionAuth.PASSWORD
    assert parsed.oauth is not None


def _problem_at(found: list[str], path: str) -> str:
    matching = [p for p in found if p.startswith(f"{path}:")]
    assert matching, found
    return matching[0]


def test_a_secret_beside_oauth2_is_refused() -> None:
    account = oauth_account(GMAIL)
    account["Imap"]["Secret"] = {"Env": "WORK_IMAP_PASSWORD"}
    account["Delivery"] = {
        "Smtp": {"Host": "smtp.gmail.com", "Auth": "oauth2", "Secret": {"Env": "X"}}
    }
    found = problems_of({"Accounts": [account]})
    assert "oauth2" in _problem_at(found, "Accounts[0].Imap.Secret")
    assert "oauth2" in _problem_at(found, "Accounts[0].Delivery.Smtp.Secret")
    assert "required" in _problem_at(found, "Accounts[0].Delivery.Smtp.Username")


def test_oauth2_without_an_oauth_block_is_refused_naming_the_connection() -> None:
    found = problems_of({"Accounts": [oauth_account(None)]})
    assert "Imap.Auth" in _problem_at(found, "Accounts[0].OAuth")


def test_an_oauth_block_no_connection_uses_is_refused() -> None:
    account = oauth_account(GMAIL, imap_auth="password")
    assert "used only" in _problem_at(problems_of({"Accounts": [account]}), "Accounts[0].OAuth")


def test_a_local_account_takes_an_oauth_block_only_for_its_submission_server() -> None:
    account: dict[str, Any] = {"Id": "local", "Kind": "local", "OAuth": GMAIL}
    assert "used only" in _problem_at(problems_of({"Accounts": [account]}), "Accounts[0].OAuth")
    smtp = {"Host": "smtp.gmail.com", "Auth": "oauth2", "Username": "me@gmail.com"}
    account["Delivery"] = {"Smtp": smtp}
    assert parse({"Accounts": [account]}).accounts[0].oauth is not None


def test_a_password_connection_still_needs_its_secret() -> None:
    account = oauth_account(None, imap_auth="password")
    del account["Imap"]["Secret"]
    _problem_at(problems_of({"Accounts": [account]}), "Accounts[0].Imap.Secret")


@pytest.mark.parametrize(
    "endpoint",
    [
        "http://auth.example.org/token",
        "http://10.0.0.1/token",
        "ftp://127.0.0.1/token",
        "https:///token",
        "https://user:s3cr3t@auth.example.org/token",
        "https://auth.example.org/token#x",
        "https://auth.example.org:port/token",
        "/token",
    ],
)
def test_an_endpoint_off_https_or_malformed_is_refused(endpoint: str) -> None:
    oauth = {**GMAIL, "Provider": "generic", "TokenEndpoint": endpoint, "Scopes": ["mail"]}
    found = problems_of({"Accounts": [oauth_account(oauth)]})
    problem = _problem_at(found, "Accounts[0].OAuth.TokenEndpoint")
    assert "s3cr3t" not in problem


def test_every_mistake_in_the_oauth_block_is_named() -> None:
    oauth = {
        "Provider": "yahoo",
        "ClientId": "has space",
        "RefreshToken": "a-literal-token",
        "Scopes": ["ok", "two words", "ok"],
        "Tenant": "contoso",
        "Mechanism": "plain",
        "RefreshMarginSeconds": -1,
        "AccessToken": "x",
    }
    found = problems_of({"Accounts": [oauth_account(oauth)]})
    assert "gmail | microsoft | generic" in _problem_at(found, "Accounts[0].OAuth.Provider")
    for path in (
        "Accounts[0].OAuth.ClientId",
        "Accounts[0].OAuth.RefreshToken",
        "Accounts[0].OAuth.Scopes[1]",
        "Accounts[0].OAuth.Scopes",
        "Accounts[0].OAuth.Mechanism",
        "Accounts[0].OAuth.RefreshMarginSeconds",
        "Accounts[0].OAuth.AccessToken",
    ):
        _problem_at(found, path)
    assert not any("a-literal-token" in p for p in found)


def test_a_generic_provider_without_endpoint_or_scopes_is_refused() -> None:
    oauth = {**GMAIL, "Provider": "generic"}
    found = problems_of({"Accounts": [oauth_account(oauth)]})
    assert "generic" in _problem_at(found, "Accounts[0].OAuth.TokenEndpoint")
    assert "generic" in _problem_at(found, "Accounts[0].OAuth.Scopes")


def test_a_tenant_is_refused_for_a_provider_other_than_microsoft() -> None:
    found = problems_of({"Accounts": [oauth_account({**GMAIL, "Tenant": "common"})]})
    assert "microsoft" in _problem_at(found, "Accounts[0].OAuth.Tenant")
    bad_tenant = {**GMAIL, "Provider": "microsoft", "Tenant": "../evil"}
    _problem_at(problems_of({"Accounts": [oauth_account(bad_tenant)]}), "Accounts[0].OAuth.Tenant")


def test_the_refresh_token_is_required() -> None:
    oauth = {k: v for k, v in GMAIL.items() if k != "RefreshToken"}
    found = problems_of({"Accounts": [oauth_account(oauth)]})
    _problem_at(found, "Accounts[0].OAuth.RefreshToken")


def test_an_unknown_auth_is_refused() -> None:
    account = oauth_account(GMAIL, imap_auth="kerberos")
    account["Delivery"] = {"Smtp": {"Host": "smtp.gmail.com", "Auth": "ntlm"}}
    found = problems_of({"Accounts": [account]})
    assert "password | oauth2" in _problem_at(found, "Accounts[0].Imap.Auth")
    assert "password | oauth2" in _problem_at(found, "Accounts[0].Delivery.Smtp.Auth")


def test_an_oauth_account_needs_its_refresh_token_and_client_secret_readable_at_start() -> None:
    oauth = {**GMAIL, "RefreshToken": {"Env": "GMAIL_REFRESH"}, "ClientSecret": {"Env": "GMAIL_CS"}}
    smtp = {"Host": "smtp.gmail.com", "Auth": "oauth2", "Username": "me@gmail.com"}
    account = oauth_account(
        oauth,
        Delivery={"Enabled": True, "Address": "me@gmail.com", "Smtp": smtp},
        Folders=[{"Remote": "Sent", "Role": "Sent"}],
    )
    config = parse({"Accounts": [account, imap_account("other")]})
    to_sync = {(n.account_id, n.ref.env) for n in secrets_to_synchronize(config.accounts)}
    assert to_sync == {
        ("work", "GMAIL_REFRESH"),
        ("work", "GMAIL_CS"),
        ("other", "WORK_IMAP_PASSWORD"),
    }
    to_deliver = {(n.account_id, n.ref.env) for n in secrets_to_deliver(config)}
    assert to_deliver == {("work", "GMAIL_REFRESH"), ("work", "GMAIL_CS")}
    with pytest.raises(SecretUnavailable) as caught:
        require_secrets(secrets_to_synchronize(config.accounts), {"WORK_IMAP_PASSWORD": "pw"})
    assert caught.value.code == 11002
    assert "OAuth.RefreshToken" in caught.value.message
    assert "OAuth.ClientSecret" in caught.value.message
    require_secrets(
        secrets_to_synchronize(config.accounts),
        {"WORK_IMAP_PASSWORD": "pw", "GMAIL_REFRESH": "r", "GMAIL_CS": "c"},
    )
