"""The test authorization server as a Flask application built on authlib's Flask integration.

Routes: RFC 8414 metadata, the JWKS, RFC 7591 registration, the authorization endpoint (which
answers at once for the subject a test chose: there is no person at a browser), the token
endpoint (authorization code with PKCE, device code, refresh), RFC 8628 device authorization,
RFC 7009 revocation, RFC 7662 introspection, and `/control/<operation>`, guarded by the secret
the parent wrote in the config file, through which the test plays the person and the
administrator (approve a device code, revoke, mint, rotate the key, ...).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any

from authlib.integrations.flask_oauth2 import AuthorizationServer
from authlib.oauth2.rfc6749 import OAuth2Error
from authlib.oauth2.rfc8414 import AuthorizationServerMetadata
from authlib.oauth2.rfc9207 import AuthorizationServerMetadata as IssuerMetadata
from flask import Flask, Response, abort, g, jsonify, request

from .oauth_grants import Issuer, S256Required, Tokens, bind, resource_indicator
from .oauth_state import GRANT_KINDS, Client, RefreshRecord, Store, Subject

CONTROL_HEADER = "X-Control-Secret"


def metadata_of(issuer: str) -> dict[str, Any]:
    """RFC 8414 metadata, with RFC 8628's and RFC 9207's additions."""
    return {
        "issuer": issuer,
        "authorization_endpoint": f"{issuer}/authorize",
        "token_endpoint": f"{issuer}/token",
        "device_authorization_endpoint": f"{issuer}/device_authorization",
        "registration_endpoint": f"{issuer}/register",
        "revocation_endpoint": f"{issuer}/revoke",
        "introspection_endpoint": f"{issuer}/introspect",
        "jwks_uri": f"{issuer}/jwks",
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": [
            "authorization_code",
            "refresh_token",
            "urn:ietf:params:oauth:grant-type:device_code",
        ],
        "token_endpoint_auth_methods_supported": [
            "none",
            "client_secret_basic",
            "client_secret_post",
        ],
        "revocation_endpoint_auth_methods_supported": [
            "none",
            "client_secret_basic",
            "client_secret_post",
        ],
        "introspection_endpoint_auth_methods_supported": [
            "client_secret_basic",
            "client_secret_post",
        ],
        "code_challenge_methods_supported": ["S256"],
        "authorization_response_iss_parameter_supported": True,
    }


def create_app(store: Store, control_secret: str) -> Flask:
    app = Flask("mailfathom-test-oauth")
    metadata = metadata_of(store.issuer)
    AuthorizationServerMetadata(metadata).validate(metadata_classes=[IssuerMetadata])
    tokens = Tokens(store)

    def save_token(token: dict[str, Any], oauth_request: Any) -> None:
        grant_id: str = g.grant_id
        record = store.remember_access(token["access_token"], grant_id)
        refresh = token.get("refresh_token")
        if refresh:
            store.refresh[refresh] = RefreshRecord(
                token=refresh,
                subject=record.claims["sub"],
                client_id=record.claims["client_id"],
                scope=record.get_scope(),
                resource=g.get("grant_resource"),
                grant_id=grant_id,
            )
        store.counts[GRANT_KINDS.get(oauth_request.payload.grant_type, "other")] += 1

    server = AuthorizationServer(app, query_client=store.clients.get, save_token=save_token)
    server.register_token_generator("default", tokens)
    classes = bind(store)
    server.register_grant(classes["code"], [S256Required(required=True), resource_indicator])
    server.register_grant(classes["device"])
    server.register_grant(classes["refresh"])
    server.register_extension(Issuer(store.issuer))
    server.register_endpoint(classes["device_authorization"])
    server.register_endpoint(classes["introspection"])
    server.register_endpoint(classes["revocation"])
    server.register_endpoint(classes["registration"](server, metadata))

    @app.before_request
    def hold() -> None:
        store.lock.acquire()
        g.holding = True

    @app.teardown_request
    def release(_: BaseException | None) -> None:
        if g.pop("holding", False):
            store.lock.release()

    @app.get("/.well-known/oauth-authorization-server")
    def well_known() -> Response:
        return jsonify(metadata)

    @app.get("/jwks")
    def jwks() -> Response:
        return jsonify(store.keys.jwks())

    @app.post("/register")
    def register() -> Any:
        return server.create_endpoint_response("client_registration")

    @app.get("/authorize")
    def authorize() -> Any:
        try:
            grant = server.get_consent_grant(end_user=None)
        except OAuth2Error as error:
            return server.handle_error_response(None, error)
        user = Subject(store.authorize_as) if store.authorize_as is not None else None
        return server.create_authorization_response(grant=grant, grant_user=user)

    @app.post("/token")
    def token() -> Any:
        return server.create_token_response()

    @app.post("/device_authorization")
    def device_authorization() -> Any:
        return server.create_endpoint_response("device_authorization")

    @app.get("/device")
    def device_page() -> tuple[str, int]:
        return "Enter the code shown on your device.\n", 200

    @app.post("/revoke")
    def revoke() -> Any:
        return server.create_endpoint_response("revocation")

    @app.post("/introspect")
    def introspect() -> Any:
        return server.create_endpoint_response("introspection")

    operations = control_operations(store)

    @app.post("/control/<operation>")
    def control(operation: str) -> Response:
        given = request.headers.get(CONTROL_HEADER, "")
        if not secrets.compare_digest(given.encode(), control_secret.encode()):
            abort(403)
        if operation not in operations:
            abort(404)
        return jsonify({"result": operations[operation](**(request.get_json() or {}))})

    return app


def control_operations(store: Store) -> dict[str, Callable[..., Any]]:
    """What a test does as the person, the administrator or the clock."""

    def add_client(
        client_id: str,
        secret: str | None,
        redirect_uris: list[str],
        scope: str,
        whole_authorization: bool,
    ) -> None:
        store.clients[client_id] = Client(
            client_id,
            secret,
            list(redirect_uris),
            scope,
            whole_authorization=whole_authorization,
        )

    def decide_device(user_code: str, subject: str | None) -> None:
        if not any(d["user_code"] == user_code for d in store.devices.values()):
            abort(404)
        store.device_decisions[user_code] = (Subject(subject or ""), subject is not None)

    def set_value(name: str) -> Callable[[Any], None]:
        def setter(value: Any) -> None:
            setattr(store, name, value)

        return setter

    return {
        "add_client": add_client,
        "approve_device": lambda user_code, subject: decide_device(user_code, subject),
        "deny_device": lambda user_code: decide_device(user_code, None),
        "approve_authorizations_as": set_value("authorize_as"),
        "set_access_token_lifetime": set_value("access_lifetime"),
        "set_device_code_lifetime": set_value("device_lifetime"),
        "set_device_interval": set_value("device_interval"),
        "set_refresh_rotation": set_value("rotate_refresh"),
        "revoke_refresh_tokens": store.revoke_refresh_tokens,
        "live_refresh_tokens": store.live_refresh_tokens,
        "mint_access_token": store.mint,
        "rotate_signing_key": store.keys.rotate,
        "counts": lambda: dict(store.counts),
    }
