"""What the test authorization server remembers: clients, codes, device grants, tokens, keys.

Everything lives in memory in the server's process (`oauth_main.py`); the objects implement
the model interfaces authlib's grants and endpoints call (`ClientMixin`, `TokenMixin`, ...).
Tokens issued under one grant (one code exchange or device approval, and every refresh after
it) share a `grant_id`, so revoking a refresh token can end the whole family as RFC 7009
section 2.1 suggests.
"""

from __future__ import annotations

import secrets
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from authlib.oauth2.rfc6749 import AuthorizationCodeMixin, ClientMixin, TokenMixin
from authlib.oauth2.rfc6749.util import list_to_scope, scope_to_list
from authlib.oauth2.rfc8628 import DeviceCredentialDict
from joserfc import jwt
from joserfc.jwk import Key, KeySet, RSAKey

DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
GRANT_KINDS = {"authorization_code": "code", DEVICE_GRANT: "device", "refresh_token": "refresh"}
# `localhost` as well, as Microsoft Entra ID matches it: a desktop client registers
# `http://localhost` and redirects to any port of it.
_LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})


@dataclass(frozen=True)
class Subject:
    """The person who granted access; the subject of a mail grant is the mail login name."""

    name: str

    def get_user_id(self) -> str:
        return self.name


def _same_redirect(registered: str, given: str) -> bool:
    """RFC 8252 section 7.3: a loopback IP redirect URI (and `localhost`) matches on any
    port."""
    if registered == given:
        return True
    a, b = urlsplit(registered), urlsplit(given)
    if a.scheme != "http" or b.scheme != "http" or a.hostname not in _LOOPBACK_HOSTS:
        return False
    return (a.hostname, a.path, a.query) == (b.hostname, b.path, b.query)


@dataclass
class Client(ClientMixin):  # type: ignore[misc]
    """A registered client: public (no secret, `token_endpoint_auth_method = none`) or
    confidential (`client_secret_basic` or `client_secret_post`). An empty `scope` allows
    any scope. With `whole_authorization`, revoking any token issued to the client ends
    every grant its subject gave the client, as Google does."""

    client_id: str
    secret: str | None = None
    redirect_uris: list[str] = field(default_factory=list)
    scope: str = ""
    grant_types: list[str] = field(
        default_factory=lambda: ["authorization_code", "refresh_token", DEVICE_GRANT]
    )
    response_types: list[str] = field(default_factory=lambda: ["code"])
    whole_authorization: bool = False

    def get_client_id(self) -> str:
        return self.client_id

    def get_default_redirect_uri(self) -> str | None:
        return self.redirect_uris[0] if self.redirect_uris else None

    def get_allowed_scope(self, scope: str | None) -> str:
        if not scope:
            return self.scope
        if not self.scope:
            return scope
        allowed = set(scope_to_list(self.scope))
        return str(list_to_scope([s for s in scope_to_list(scope) if s in allowed]))

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        return any(_same_redirect(uri, redirect_uri) for uri in self.redirect_uris)

    def check_client_secret(self, client_secret: str) -> bool:
        return self.secret is not None and secrets.compare_digest(self.secret, client_secret)

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        if self.secret is None:
            return method == "none"
        return method in ("client_secret_basic", "client_secret_post")

    def check_response_type(self, response_type: str) -> bool:
        return response_type in self.response_types

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type in self.grant_types


@dataclass
class AuthorizationCode(AuthorizationCodeMixin):  # type: ignore[misc]
    code: str
    client_id: str
    redirect_uri: str
    scope: str
    subject: str
    code_challenge: str | None
    code_challenge_method: str | None
    resource: str | None
    expires_at: float

    def get_redirect_uri(self) -> str:
        return self.redirect_uri

    def get_scope(self) -> str:
        return self.scope

    def is_expired(self) -> bool:
        return time.time() >= self.expires_at


@dataclass
class AccessRecord(TokenMixin):  # type: ignore[misc]
    """An issued (or minted) JWT access token, remembered so introspection can answer it."""

    token: str
    claims: dict[str, Any]
    grant_id: str
    revoked: bool = False

    def check_client(self, client: Client) -> bool:
        owner: str = self.claims["client_id"]
        return owner == client.get_client_id()

    def get_scope(self) -> str:
        return str(self.claims.get("scope", ""))

    def get_expires_in(self) -> int:
        return int(self.claims["exp"] - self.claims["iat"])

    def is_expired(self) -> bool:
        expires: int = self.claims["exp"]
        return time.time() >= expires

    def is_revoked(self) -> bool:
        return self.revoked

    def introspection(self) -> dict[str, Any]:
        """RFC 7662 section 2.2, with `username` the subject (what Dovecot and SMTP log in as)."""
        c = self.claims
        return {
            "active": True,
            "token_type": "Bearer",
            "username": c["sub"],
            "sub": c["sub"],
            "scope": c.get("scope", ""),
            "client_id": c["client_id"],
            "aud": c["aud"],
            "iss": c["iss"],
            "exp": c["exp"],
            "iat": c["iat"],
            "jti": c["jti"],
        }


@dataclass
class RefreshRecord(TokenMixin):  # type: ignore[misc]
    token: str
    subject: str
    client_id: str
    scope: str
    resource: str | None
    grant_id: str
    revoked: bool = False

    def check_client(self, client: Client) -> bool:
        return self.client_id == client.get_client_id()

    def get_scope(self) -> str:
        return self.scope

    def get_expires_in(self) -> int:
        return 0

    def is_expired(self) -> bool:
        return False

    def is_revoked(self) -> bool:
        return self.revoked

    def introspection(self) -> dict[str, Any]:
        return {
            "active": True,
            "token_type": "refresh_token",
            "username": self.subject,
            "sub": self.subject,
            "scope": self.scope,
            "client_id": self.client_id,
        }


class Keys:
    """The RS256 signing keys: the current one signs, every one made so far is published
    (a rotation leaves tokens signed before it verifiable until they expire)."""

    def __init__(self) -> None:
        self.current = self._new()
        self.published: list[Key] = [self.current]

    @staticmethod
    def _new() -> RSAKey:
        return RSAKey.generate_key(2048, parameters={"use": "sig", "alg": "RS256"}, auto_kid=True)

    def rotate(self) -> None:
        self.current = self._new()
        self.published.append(self.current)

    def signing(self) -> KeySet:
        """The current key alone, as a set, so joserfc writes its `kid` in every header."""
        return KeySet([self.current])

    def unpublished(self) -> KeySet:
        return KeySet([self._new()])

    def jwks(self) -> dict[str, Any]:
        return dict(KeySet(self.published).as_dict(private=False))

    def claims_of(self, token: str) -> dict[str, Any]:
        """The claims of a token this server signed."""
        return dict(jwt.decode(token, KeySet(self.published), algorithms=["RS256"]).claims)


@dataclass
class Store:
    """The whole state. `lock` is held for each request and each control operation."""

    issuer: str
    lock: threading.RLock = field(default_factory=threading.RLock)
    keys: Keys = field(default_factory=Keys)
    clients: dict[str, Client] = field(default_factory=dict)
    codes: dict[str, AuthorizationCode] = field(default_factory=dict)
    devices: dict[str, DeviceCredentialDict] = field(default_factory=dict)
    device_decisions: dict[str, tuple[Subject, bool]] = field(default_factory=dict)
    access: dict[str, AccessRecord] = field(default_factory=dict)
    refresh: dict[str, RefreshRecord] = field(default_factory=dict)
    counts: Counter[str] = field(default_factory=Counter)
    access_lifetime: int = 3600
    device_lifetime: int = 600
    device_interval: int = 1
    rotate_refresh: bool = True
    authorize_as: str | None = None

    def find(self, token: str, hint: str | None) -> AccessRecord | RefreshRecord | None:
        if hint == "refresh_token":
            return self.refresh.get(token) or self.access.get(token)
        return self.access.get(token) or self.refresh.get(token)

    def remember_access(self, token: str, grant_id: str) -> AccessRecord:
        record = AccessRecord(token, self.keys.claims_of(token), grant_id)
        self.access[token] = record
        return record

    def revoke(self, record: AccessRecord | RefreshRecord) -> None:
        """An access token alone; a refresh token with every token of its grant; either,
        for a client revoked by whole authorization, with every grant of its subject."""
        subject, client_id = (
            (record.claims["sub"], record.claims["client_id"])
            if isinstance(record, AccessRecord)
            else (record.subject, record.client_id)
        )
        client = self.clients.get(client_id)
        if client is not None and client.whole_authorization:
            for item in self.refresh.values():
                if (item.subject, item.client_id) == (subject, client_id):
                    self._revoke_grant(item.grant_id)
            return
        if isinstance(record, AccessRecord):
            record.revoked = True
            return
        self._revoke_grant(record.grant_id)

    def _revoke_grant(self, grant_id: str) -> None:
        for family in (self.access.values(), self.refresh.values()):
            for item in family:
                if item.grant_id == grant_id:
                    item.revoked = True

    def live_refresh_tokens(self, subject: str) -> int:
        return sum(1 for r in self.refresh.values() if r.subject == subject and not r.revoked)

    def revoke_refresh_tokens(self, subject: str) -> int:
        found = [r for r in self.refresh.values() if r.subject == subject and not r.revoked]
        for record in found:
            record.revoked = True
        return len(found)

    def mint(
        self,
        subject: str,
        *,
        audience: str,
        scopes: list[str],
        expires_in: int,
        client_id: str,
        key: str,
    ) -> str:
        """An access token made without a grant, as if issued to `client_id`; signed by the
        served key (and then answered by introspection) or by a key never published."""
        if key not in ("current", "unknown"):
            raise ValueError("key is 'current' or 'unknown'")
        now = int(time.time())
        claims = {
            "iss": self.issuer,
            "sub": subject,
            "aud": audience,
            "scope": " ".join(scopes),
            "client_id": client_id,
            "iat": now,
            "exp": now + expires_in,
            "jti": uuid.uuid4().hex,
        }
        keys = self.keys.signing() if key == "current" else self.keys.unpublished()
        token = jwt.encode({"alg": "RS256", "typ": "at+jwt"}, claims, keys)
        if key == "current":
            self.access[token] = AccessRecord(token, claims, grant_id=f"minted-{uuid.uuid4()}")
        return token
