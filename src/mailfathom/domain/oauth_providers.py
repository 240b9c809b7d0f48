"""What Gmail and Microsoft 365 (Outlook.com included) are known to need, so an operator
names the provider and not every endpoint, scope and server.

The scopes are the least that reading mail over IMAP and sending it over SMTP take: Google
grants both only under `https://mail.google.com/`; Microsoft grants them as two scopes of
the Outlook resource, and issues a refresh token only when `offline_access` is asked for
too. Microsoft's endpoints carry the tenant: `common` admits work, school and personal
accounts alike, `organizations` or `consumers` narrow it, and a directory's id or domain
name admits only that directory's accounts.

Google serves a device authorization endpoint, but not for the mail scope (its device flow
admits a short list of scopes that leaves mail out), so a Gmail grant takes the loopback
redirect with PKCE (RFC 8252) and the Gmail preset names no device endpoint.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mailfathom.domain.connections import TlsMode
from mailfathom.domain.oauth import OAuthProvider

DEFAULT_TENANT = "common"
# A tenant as Microsoft's endpoints take it in their path: `common`, `organizations`,
# `consumers`, a directory's GUID, or one of its domain names.
TENANT = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?")


@dataclass(frozen=True, slots=True)
class ServerPreset:
    host: str
    port: int
    tls: TlsMode


@dataclass(frozen=True, slots=True)
class ProviderPreset:
    """A provider's endpoints, the scopes a mail account needs there, and its servers."""

    provider: OAuthProvider
    token_endpoint: str
    authorization_endpoint: str
    device_authorization_endpoint: str | None
    revocation_endpoint: str | None
    scopes: tuple[str, ...]
    imap: ServerPreset
    smtp: ServerPreset


GMAIL_SCOPES = ("https://mail.google.com/",)
MICROSOFT_SCOPES = (
    "https://outlook.office.com/IMAP.AccessAsUser.All",
    "https://outlook.office.com/SMTP.Send",
    "offline_access",
)

_GMAIL = ProviderPreset(
    provider=OAuthProvider.GMAIL,
    token_endpoint="https://oauth2.googleapis.com/token",  # noqa: S106 (an address)
    authorization_endpoint="https://accounts.google.com/o/oauth2/v2/auth",
    device_authorization_endpoint=None,
    revocation_endpoint="https://oauth2.googleapis.com/revoke",
    scopes=GMAIL_SCOPES,
    imap=ServerPreset("imap.gmail.com", 993, TlsMode.IMPLICIT),
    smtp=ServerPreset("smtp.gmail.com", 465, TlsMode.IMPLICIT),
)


def provider_preset(provider: OAuthProvider, tenant: str = DEFAULT_TENANT) -> ProviderPreset | None:
    """The preset of a named provider (None for `GENERIC`, which names everything itself).
    `tenant` is read for Microsoft only and must match `TENANT`."""
    if provider is OAuthProvider.GMAIL:
        return _GMAIL
    if provider is OAuthProvider.MICROSOFT:
        if not TENANT.fullmatch(tenant):
            raise ValueError("a Microsoft tenant is a directory id, a domain name or 'common'")
        base = f"https://login.microsoftonline.com/{tenant}/oauth2/v2.0"
        return ProviderPreset(
            provider=OAuthProvider.MICROSOFT,
            token_endpoint=f"{base}/token",
            authorization_endpoint=f"{base}/authorize",
            device_authorization_endpoint=f"{base}/devicecode",
            revocation_endpoint=None,
            scopes=MICROSOFT_SCOPES,
            imap=ServerPreset("outlook.office365.com", 993, TlsMode.IMPLICIT),
            smtp=ServerPreset("smtp.office365.com", 587, TlsMode.STARTTLS),
        )
    return None
