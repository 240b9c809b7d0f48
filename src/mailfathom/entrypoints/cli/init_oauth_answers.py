"""The OAuth questions of `mailfathom init --provider`: the client the operator registered
with the provider, what it asks for, how the person grants access, and where the refresh
token is kept.

A named provider brings its scopes, and they are the least a mail account needs there, so
`--scope` is taken only for a generic server; `--tenant` only for Microsoft, `--issuer` only
for a generic server. A client secret, like every secret, is taken only as where it is kept.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from mailfathom.domain.config import SecretRef
from mailfathom.domain.oauth import OAuthProvider
from mailfathom.domain.oauth_providers import TENANT, ProviderPreset, provider_preset
from mailfathom.domain.web_addresses import endpoint_problem
from mailfathom.entrypoints.cli.init_questions import (
    ENV_NAME,
    AnswerMissing,
    AnswerNotUsable,
    Questions,
)

PROVIDERS = {
    "gmail": OAuthProvider.GMAIL,
    "microsoft": OAuthProvider.MICROSOFT,
    "generic-oauth": OAuthProvider.GENERIC,
}
# RFC 6749 section 3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
_SCOPE_TOKEN = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+")
_CLIENT_ID = re.compile(r"[\x21-\x7e]{1,512}")


class GrantFlow(enum.Enum):
    """How the person grants access: a code typed on any device (RFC 8628), or the browser
    sent back to a listener on this machine (RFC 8252)."""

    DEVICE = "device"
    LOOPBACK = "loopback"


@dataclass
class OAuthFlags:
    """The OAuth flags as given; None (or empty) where not given."""

    provider: str | None = None
    client_id: str | None = None
    client_secret_env: str | None = None
    client_secret_file: Path | None = None
    issuer: str | None = None
    scopes: tuple[str, ...] = ()
    tenant: str | None = None
    flow: str | None = None
    refresh_token_file: Path | None = None
    refresh_token_env: str | None = None


@dataclass(frozen=True, slots=True)
class OAuthAnswers:
    """`scopes` is empty for a named provider (its preset's are asked for); `flow` None
    takes the provider's default; `refresh_token_file` None the default path."""

    provider: OAuthProvider
    client_id: str
    client_secret: SecretRef | None
    issuer: str | None
    scopes: tuple[str, ...]
    tenant: str | None
    flow: GrantFlow | None
    refresh_token_file: Path | None
    refresh_token_env: str | None


def provider_named(name: str | None) -> OAuthProvider | None:
    if name is None:
        return None
    provider = PROVIDERS.get(name.strip().lower())
    if provider is None:
        raise AnswerNotUsable(f"--provider must be one of {', '.join(PROVIDERS)}.")
    return provider


def preset_of(provider: OAuthProvider, tenant: str | None) -> ProviderPreset | None:
    if tenant is not None and provider is not OAuthProvider.MICROSOFT:
        raise AnswerNotUsable("--tenant is read only with --provider microsoft.")
    if tenant is not None and not TENANT.fullmatch(tenant):
        raise AnswerNotUsable(
            "--tenant must be common, organizations, consumers, a directory id or a domain name."
        )
    if tenant is None:
        return provider_preset(provider)
    return provider_preset(provider, tenant)


def flow_named(name: str | None) -> GrantFlow | None:
    if name is None:
        return None
    flow = next((f for f in GrantFlow if f.value == name.strip().lower()), None)
    if flow is None:
        raise AnswerNotUsable("--flow must be device or loopback.")
    return flow


def _issuer(q: Questions, given: str | None) -> str:
    issuer = q.value(given, "--issuer", "Issuer of the authorization server (https://...)")
    if endpoint_problem(issuer) is not None or urlsplit(issuer).query:
        raise AnswerNotUsable(
            "--issuer must be an https:// address without query or fragment (http:// only "
            "on a loopback host)."
        )
    return issuer


def _scopes(q: Questions, given: tuple[str, ...]) -> tuple[str, ...]:
    scopes = given
    if not scopes:
        scopes = tuple(q.value(None, "--scope", "Scopes to ask for, separated by spaces").split())
    if not scopes:
        raise AnswerMissing("--scope is needed with --provider generic-oauth.")
    if not all(_SCOPE_TOKEN.fullmatch(s) for s in scopes) or len(set(scopes)) != len(scopes):
        raise AnswerNotUsable("--scope must name each scope once, printable ASCII, no quotes.")
    return scopes


def _client_secret(q: Questions, f: OAuthFlags, needed: bool) -> SecretRef | None:
    if f.client_secret_env is None and f.client_secret_file is None and not needed:
        return None
    return q.secret(
        f.client_secret_env,
        f.client_secret_file,
        "--client-secret-env or --client-secret-file",
        "Where the client secret is kept: an environment variable's name, or a file's path",
        "Accounts[0].OAuth.ClientSecret",
    )


def gather_oauth(
    q: Questions, f: OAuthFlags, provider: OAuthProvider, preset: ProviderPreset | None
) -> OAuthAnswers:
    generic = provider is OAuthProvider.GENERIC
    if not generic and (f.issuer is not None or f.scopes):
        raise AnswerNotUsable(
            "--issuer and --scope are read only with --provider generic-oauth; the named "
            "providers' endpoints and scopes are preset."
        )
    client_id = q.value(f.client_id, "--client-id", "Client id registered with the provider")
    if not _CLIENT_ID.fullmatch(client_id):
        raise AnswerNotUsable("--client-id must be 1 to 512 characters without spaces.")
    # Google's token endpoint wants a desktop client's secret, though it protects nothing.
    client_secret = _client_secret(q, f, needed=provider is OAuthProvider.GMAIL)
    if f.refresh_token_env is not None and not ENV_NAME.fullmatch(f.refresh_token_env):
        raise AnswerNotUsable("--refresh-token-env must be a variable's name.")
    refresh_file = f.refresh_token_file
    return OAuthAnswers(
        provider=provider,
        client_id=client_id,
        client_secret=client_secret,
        issuer=_issuer(q, f.issuer) if generic else None,
        scopes=_scopes(q, f.scopes) if generic else (),
        tenant=f.tenant if preset is not None else None,
        flow=flow_named(f.flow),
        refresh_token_file=None if refresh_file is None else refresh_file.expanduser().absolute(),
        refresh_token_env=f.refresh_token_env,
    )
