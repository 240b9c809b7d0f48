"""authlib's grants and endpoints, bound to the in-memory `Store` of the test server.

Each class fills in only the storage hooks authlib asks for; the protocol (PKCE, the device
grant's polling answers, client authentication, refresh, RFC 7009 / 7591 / 7662) is authlib's.
Two things authlib leaves out are added here: RFC 8707 `resource` (checked on the
authorization and device requests, remembered with the grant, and put in the token's `aud`),
and PKCE made mandatory with S256 only, as OAuth 2.1 requires.
"""

from __future__ import annotations

import time
import uuid
from typing import Any, ClassVar
from urllib.parse import urlsplit

from authlib.common.security import generate_token
from authlib.oauth2.rfc6749 import InvalidRequestError, OAuth2Error
from authlib.oauth2.rfc6749.grants import AuthorizationCodeGrant, RefreshTokenGrant
from authlib.oauth2.rfc7009 import RevocationEndpoint
from authlib.oauth2.rfc7591 import ClientRegistrationEndpoint
from authlib.oauth2.rfc7636 import CodeChallenge
from authlib.oauth2.rfc7662 import IntrospectionEndpoint
from authlib.oauth2.rfc8628 import (
    DeviceAuthorizationEndpoint,
    DeviceCodeGrant,
    DeviceCredentialDict,
)
from authlib.oauth2.rfc9068 import JWTBearerTokenGenerator
from authlib.oauth2.rfc9207 import IssuerParameter
from flask import g
from flask import request as flask_request

from .oauth_state import (
    AccessRecord,
    AuthorizationCode,
    Client,
    RefreshRecord,
    Store,
    Subject,
)

CODE_LIFETIME = 600
SECRET_METHODS = ["client_secret_basic", "client_secret_post"]
ANY_METHOD = [*SECRET_METHODS, "none"]


class InvalidTargetError(OAuth2Error):  # type: ignore[misc]
    """RFC 8707 section 2: a `resource` that is not an absolute URI without fragment, or one
    the grant does not cover."""

    error = "invalid_target"
    status_code = 400


def checked_resource(value: str | None) -> str | None:
    if value is None:
        return None
    parts = urlsplit(value)
    if not parts.scheme or not parts.netloc or parts.fragment or "#" in value:
        raise InvalidTargetError("The resource must be an absolute URI without a fragment")
    return value


def audience_for(granted: str | None) -> None:
    """Decide the `aud` of the token about to be issued: the `resource` of the token request,
    which must be the one the grant covers when the grant named one; else the grant's."""
    asked = checked_resource(flask_request.form.get("resource"))
    if asked is not None and granted is not None and asked != granted:
        raise InvalidTargetError("The resource is not the one authorized")
    g.audience = asked or granted
    g.grant_resource = granted


class Tokens(JWTBearerTokenGenerator):  # type: ignore[misc]
    """RFC 9068 access tokens signed with the store's current key; `aud` is the RFC 8707
    resource when one was given, else the client id (authlib's default)."""

    def __init__(self, store: Store) -> None:
        super().__init__(
            issuer=store.issuer,
            alg="RS256",
            refresh_token_generator=lambda **_: generate_token(48),
            expires_generator=lambda client, grant_type: store.access_lifetime,
        )
        self.store = store

    def get_jwks(self) -> Any:
        return self.store.keys.signing()

    def get_audiences(self, client: Client, user: Subject | None, scope: str) -> str:
        audience: str | None = g.get("audience")
        return audience or client.get_client_id()


class S256Required(CodeChallenge):  # type: ignore[misc]
    """PKCE on every authorization request, S256 only (OAuth 2.1, MCP authorization)."""

    SUPPORTED_CODE_CHALLENGE_METHOD: ClassVar[list[str]] = ["S256"]
    DEFAULT_CODE_CHALLENGE_METHOD = "S256"

    def validate_code_challenge(self, grant: AuthorizationCodeGrant, redirect_uri: str) -> None:
        data = grant.request.payload.data
        if not data.get("code_challenge") or data.get("code_challenge_method") != "S256":
            raise InvalidRequestError("PKCE with code_challenge_method=S256 is required")
        super().validate_code_challenge(grant, redirect_uri)


def resource_indicator(grant: AuthorizationCodeGrant) -> None:
    """Refuse a malformed `resource` on the authorization request, through the redirect."""

    def check(grant: AuthorizationCodeGrant, redirect_uri: str) -> None:
        checked_resource(grant.request.payload.data.get("resource"))

    grant.register_hook("after_validate_authorization_request_payload", check)


class Issuer(IssuerParameter):  # type: ignore[misc]
    """RFC 9207: `iss` in every authorization response."""

    def __init__(self, issuer: str) -> None:
        self.issuer = issuer

    def get_issuer(self) -> str:
        return self.issuer


def bind(store: Store) -> dict[str, Any]:
    """The grant and endpoint classes, closed over `store`."""

    class CodeGrant(AuthorizationCodeGrant):  # type: ignore[misc]
        TOKEN_ENDPOINT_AUTH_METHODS = ANY_METHOD

        def save_authorization_code(self, code: str, request: Any) -> None:
            data = request.payload.data
            store.codes[code] = AuthorizationCode(
                code=code,
                client_id=request.client.get_client_id(),
                redirect_uri=request.payload.redirect_uri or "",
                scope=request.scope or "",
                subject=request.user.get_user_id(),
                code_challenge=data.get("code_challenge"),
                code_challenge_method=data.get("code_challenge_method"),
                resource=data.get("resource"),
                expires_at=time.time() + CODE_LIFETIME,
            )

        def query_authorization_code(self, code: str, client: Client) -> AuthorizationCode | None:
            item = store.codes.get(code)
            if item and item.client_id == client.get_client_id() and not item.is_expired():
                return item
            return None

        def delete_authorization_code(self, authorization_code: AuthorizationCode) -> None:
            store.codes.pop(authorization_code.code, None)

        def authenticate_user(self, authorization_code: AuthorizationCode) -> Subject:
            return Subject(authorization_code.subject)

        def validate_token_request(self) -> None:
            super().validate_token_request()
            audience_for(self.request.authorization_code.resource)
            g.grant_id = uuid.uuid4().hex

    class DeviceGrant(DeviceCodeGrant):  # type: ignore[misc]
        def query_device_credential(self, device_code: str) -> DeviceCredentialDict | None:
            return store.devices.get(device_code)

        def query_user_grant(self, user_code: str) -> tuple[Subject, bool] | None:
            return store.device_decisions.get(user_code)

        def should_slow_down(self, credential: DeviceCredentialDict) -> bool:
            """RFC 8628 section 3.5: polled sooner than `interval` after the previous poll;
            the interval grows by 5 s for this and every later request."""
            now = time.monotonic()
            last, credential["last_poll"] = credential.get("last_poll"), now
            if last is not None and now - last < credential["interval"]:
                credential["interval"] += 5
                return True
            return False

        def validate_token_request(self) -> None:
            super().validate_token_request()
            audience_for(self.request.credential.get("resource"))
            g.grant_id = uuid.uuid4().hex

        def create_token_response(self) -> Any:
            answer = super().create_token_response()
            store.devices.pop(self.request.credential["device_code"], None)
            return answer

    class RefreshGrant(RefreshTokenGrant):  # type: ignore[misc]
        TOKEN_ENDPOINT_AUTH_METHODS = ANY_METHOD

        @property
        def INCLUDE_NEW_REFRESH_TOKEN(self) -> bool:
            return store.rotate_refresh

        def authenticate_refresh_token(self, refresh_token: str) -> RefreshRecord | None:
            record = store.refresh.get(refresh_token)
            return record if record is not None and not record.revoked else None

        def authenticate_user(self, refresh_token: RefreshRecord) -> Subject:
            return Subject(refresh_token.subject)

        def revoke_old_credential(self, refresh_token: RefreshRecord) -> None:
            if store.rotate_refresh:
                refresh_token.revoked = True

        def validate_token_request(self) -> None:
            super().validate_token_request()
            record: RefreshRecord = self.request.refresh_token
            audience_for(record.resource)
            g.grant_id = record.grant_id

    class DeviceAuthorization(DeviceAuthorizationEndpoint):  # type: ignore[misc]
        @property
        def EXPIRES_IN(self) -> int:
            return store.device_lifetime

        @property
        def INTERVAL(self) -> int:
            return store.device_interval

        def get_verification_uri(self) -> str:
            return f"{store.issuer}/device"

        def save_device_credential(self, client_id: str, scope: str, data: dict[str, Any]) -> None:
            resource = checked_resource(flask_request.form.get("resource"))
            store.devices[data["device_code"]] = DeviceCredentialDict(
                client_id=client_id,
                scope=scope,
                resource=resource,
                expires_at=time.time() + data["expires_in"],
                **data,
            )
            store.counts["device_authorization"] += 1

    class Introspection(IntrospectionEndpoint):  # type: ignore[misc]
        CLIENT_AUTH_METHODS = SECRET_METHODS

        def query_token(self, token_string: str, token_type_hint: str | None) -> Any:
            store.counts["introspection"] += 1
            return store.find(token_string, token_type_hint)

        def check_permission(self, token: Any, client: Client, request: Any) -> bool:
            return True

        def introspect_token(self, token: AccessRecord | RefreshRecord) -> dict[str, Any]:
            return token.introspection()

    class Revocation(RevocationEndpoint):  # type: ignore[misc]
        CLIENT_AUTH_METHODS = ANY_METHOD

        def query_token(self, token_string: str, token_type_hint: str | None) -> Any:
            # A refresh token already rotated out (or revoked) is no longer known: RFC 7009
            # section 2.2 answers 200 for it and nothing more, and its grant goes on.
            found = store.find(token_string, token_type_hint)
            if isinstance(found, RefreshRecord) and found.revoked:
                return None
            return found

        def revoke_token(self, token: AccessRecord | RefreshRecord, request: Any) -> None:
            store.revoke(token)
            store.counts["revocation"] += 1

    class Registration(ClientRegistrationEndpoint):  # type: ignore[misc]
        """Open registration (RFC 7591 section 3 allows it), as MCP clients expect."""

        def __init__(self, server: Any, metadata: dict[str, Any]) -> None:
            super().__init__(server)
            self.metadata = metadata

        def authenticate_token(self, request: Any) -> bool:
            return True

        def get_server_metadata(self) -> dict[str, Any]:
            return self.metadata

        def resolve_public_key(self, request: Any) -> None:
            return None

        def extract_client_metadata(self, request: Any) -> dict[str, Any]:
            metadata: dict[str, Any] = super().extract_client_metadata(request)
            # RFC 7591 section 2: the defaults of omitted fields, answered as registered.
            metadata.setdefault("token_endpoint_auth_method", "client_secret_basic")
            metadata.setdefault("grant_types", ["authorization_code"])
            metadata.setdefault("response_types", ["code"])
            return metadata

        def generate_client_info(self, request: Any) -> dict[str, Any]:
            info: dict[str, Any] = super().generate_client_info(request)
            if request.payload.data.get("token_endpoint_auth_method") == "none":
                info.pop("client_secret")
                info.pop("client_secret_expires_at")
            return info

        def save_client(
            self, client_info: dict[str, Any], client_metadata: dict[str, Any], request: Any
        ) -> Client:
            client = Client(
                client_id=client_info["client_id"],
                secret=client_info.get("client_secret"),
                redirect_uris=list(client_metadata.get("redirect_uris", [])),
                scope=client_metadata.get("scope", ""),
                grant_types=list(client_metadata["grant_types"]),
                response_types=list(client_metadata["response_types"]),
            )
            store.clients[client.client_id] = client
            store.counts["registration"] += 1
            return client

    return {
        "code": CodeGrant,
        "device": DeviceGrant,
        "refresh": RefreshGrant,
        "device_authorization": DeviceAuthorization,
        "introspection": Introspection,
        "revocation": Revocation,
        "registration": Registration,
    }
