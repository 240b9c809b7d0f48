"""Serving the MCP endpoint over Streamable HTTP, with `/metrics` beside it when configured.

Admission happens before the MCP layer sees a request: a bearer key is hashed and compared
with the configured digests; a request with no credential is admitted only by an entry that
says `Credential = "none"`, and only from a loopback peer. A key the owner created in the
console is found in the store on every request and admits as its entry until revoked.
Where `[McpEndpoint.OAuth]` is configured, a bearer value no digest matches is checked as an
access token, and the token's subject names the entry it is served as (`oauth.admission`).
Everything else is answered with
a bearer challenge (`challenges`): a bare one where no bearer credential was presented, and
`invalid_token` where one was and does not hold. DNS-rebinding protection stays on for
loopback hosts (the SDK's default); a listener on any other address has none, which is why
exposure goes through a proxy in front of a loopback listener (docs/mcp-oauth.md). Sessions
are then bounded per caller entry (`sessions.py`). `/metrics` is served only when the
configuration names a key of its own, and only to a request presenting that key past the
same Host and Origin check, and is refused with the same challenges.

The endpoint describes itself as an OAuth protected resource (RFC 9728): its metadata is
served without authentication at `/.well-known/oauth-protected-resource` and at the form with
the endpoint's path appended (section 3.1), and every 401 from `/mcp` points at it in its
`WWW-Authenticate` challenge (section 5.1). With OAuth configured it names the configured
`Resource` (behind a proxy the request's own origin is not the address clients use), the
authorization servers and the scopes; without, the resource is the request's origin and no
authorization server is named: the credential is an API key given by the operator.

Attachment download links are served beside it at `/downloads/`, admitted by the link alone
(`download_route`), and `/livez` and `/readyz` for a supervisor or a load balancer, without a
key (`health`).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import ipaddress
import json
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import anyio.to_thread
import structlog
from mcp.server.auth.middleware.auth_context import auth_context_var
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from mailfathom.app.reading.download_attachment import AttachmentDownload
from mailfathom.domain.access import ALL_PERMISSIONS, Caller
from mailfathom.domain.api_keys import console_key_id
from mailfathom.domain.codes import Code
from mailfathom.domain.config import CallerEntry, McpEndpointConfig
from mailfathom.domain.delivery_config import MailDeliveryConfig
from mailfathom.domain.mcp_oauth import McpOAuthConfig
from mailfathom.domain.request_bounds import tool_request_octets
from mailfathom.entrypoints.body_bound import BodyBound, fixed_limit
from mailfathom.entrypoints.health import Readiness, health_routes
from mailfathom.entrypoints.mcp.challenges import (
    credential_required,
    failed,
    insufficient_scope,
    invalid_token,
    not_admitted,
    not_checked,
    too_large,
    unavailable,
)
from mailfathom.entrypoints.mcp.download_route import download_route
from mailfathom.entrypoints.mcp.envelope import EnvelopeCheck
from mailfathom.entrypoints.mcp.oauth.admission import Admitted, TokenAdmission
from mailfathom.entrypoints.mcp.oauth.assemble import token_admission
from mailfathom.entrypoints.mcp.oauth.authorization_server import (
    AuthorizationServerClient,
    AuthorizationServerUnavailable,
)
from mailfathom.entrypoints.mcp.replica_manager import replica_mcp_app
from mailfathom.entrypoints.mcp.replica_state import Replicas
from mailfathom.entrypoints.mcp.sdk_logs import withhold_refused_values
from mailfathom.entrypoints.mcp.server import CALLER_STATE_KEY, MailFathomMcp
from mailfathom.entrypoints.mcp.sessions import SessionGate, SharedSessionBook
from mailfathom.entrypoints.quiet_failures import QuietFailures

log = structlog.get_logger("mailfathom.mcp")

MCP_PATH = "/mcp"
METADATA_PATH = "/.well-known/oauth-protected-resource"
DEFAULT_BODY_OCTETS = tool_request_octets(MailDeliveryConfig().max_body_characters)


def caller_of(entry: CallerEntry) -> Caller:
    permissions = entry.permissions if entry.permissions is not None else ALL_PERMISSIONS
    return Caller(
        permissions=frozenset(permissions), label=entry.name, confirmation=entry.confirmation
    )


def _is_loopback(host: str | None) -> bool:
    if not host:
        return False
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def bearer_value(authorization: str) -> str | None:
    """The value of a bearer credential, or None when the header carries none."""
    scheme, _, value = authorization.partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        return None
    return value.strip()


def bearer_digest(authorization: str) -> str | None:
    """The hex SHA-256 of a bearer key, or None when the header carries no bearer key."""
    value = bearer_value(authorization)
    if value is None:
        return None
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()


def _origin(scope: Scope) -> str:
    """The scheme and authority the request was addressed to (the Host header has passed the
    DNS-rebinding check wherever the listener is on loopback)."""
    return str(Request(scope).base_url).rstrip("/")


def resource_metadata_url(scope: Scope) -> str:
    return _origin(scope) + METADATA_PATH + MCP_PATH


def metadata_address(resource: str) -> str:
    """Where RFC 9728 section 3.1 puts the metadata of `resource`: the well-known segment
    between its host and its path."""
    parts = urlsplit(resource)
    path = METADATA_PATH + parts.path.rstrip("/")
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


ConsoleKeys = Callable[[str], CallerEntry | None]
"""The entry a key created in the console admits as now, read from the store (blocking)."""


class AdmissionGate:
    """ASGI middleware admitting callers by configured entry, before anything else runs.

    A bearer value of a console key's shape that no configured digest matches is looked up
    in the store on every request (`console_keys`), so a key revoked in the console is
    refused from the next request on, an open session's included; nothing about it is
    cached here."""

    def __init__(
        self,
        app: ASGIApp,
        entries: Sequence[CallerEntry],
        tokens: TokenAdmission | None = None,
        console_keys: ConsoleKeys | None = None,
    ) -> None:
        self._app = app
        self._keyed = [(e.api_key_sha256, caller_of(e)) for e in entries if e.api_key_sha256]
        open_entries = [e for e in entries if e.is_open]
        self._open = caller_of(open_entries[0]) if open_entries else None
        self._tokens = tokens
        self._console_keys = console_keys

    def admit(self, authorization: str | None, peer: str | None) -> Caller | None:
        if authorization is None:
            return self._open if self._open is not None and _is_loopback(peer) else None
        digest = bearer_digest(authorization)
        if digest is None:
            return None
        found = None
        for expected, caller in self._keyed:
            if hmac.compare_digest(expected, digest):
                found = caller
        return found

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(MCP_PATH):
            await self._app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        client = scope.get("client")
        authorization = headers.get("authorization")
        caller = self.admit(authorization, client[0] if client else None)
        token = bearer_value(authorization or "")
        if caller is None and token is not None and console_key_id(token) is not None:
            try:
                caller = await self._console_key(token)
            except Exception as error:
                log.error(
                    "mcp.console_key_unchecked",
                    code=int(Code.UNDIAGNOSED),
                    error_type=type(error).__name__,
                )
                await not_checked()(scope, receive, send)
                return
        if caller is not None:
            scope.setdefault("state", {})[CALLER_STATE_KEY] = caller
            await self._app(scope, receive, send)
            return
        if token is None:
            await credential_required(self._metadata_url(scope))(scope, receive, send)
        elif self._tokens is None:
            await invalid_token(self._metadata_url(scope))(scope, receive, send)
        else:
            await self._admit_token(token, scope, receive, send)

    async def _console_key(self, key: str) -> Caller | None:
        if self._console_keys is None:
            return None
        entry = await anyio.to_thread.run_sync(self._console_keys, key)
        return None if entry is None else caller_of(entry)

    def _metadata_url(self, scope: Scope) -> str:
        if self._tokens is not None:
            return metadata_address(self._tokens.config.resource)
        return resource_metadata_url(scope)

    async def _admit_token(self, token: str, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve the request as the entry the token names, or answer why not. The SDK's
        session ownership and request-state binding read the token's principal (client,
        issuer, subject) from `user` and the auth context, so a session opened with one
        person's token is refused to every other credential."""
        assert self._tokens is not None
        try:
            outcome = await self._tokens.admit(token)
        except AuthorizationServerUnavailable:
            await unavailable()(scope, receive, send)
            return
        if isinstance(outcome, Admitted):
            user = AuthenticatedUser(outcome.token)
            scope["user"] = user
            scope.setdefault("state", {})[CALLER_STATE_KEY] = outcome.caller
            bound = auth_context_var.set(user)
            try:
                await self._app(scope, receive, send)
            finally:
                auth_context_var.reset(bound)
            return
        metadata_url = self._metadata_url(scope)
        if outcome.reason == "insufficientScope":
            answer = insufficient_scope(metadata_url, outcome.scopes)
        elif outcome.reason == "notAdmitted":
            answer = not_admitted()
        else:
            answer = invalid_token(metadata_url)
        await answer(scope, receive, send)


LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")


def transport_security(host: str) -> TransportSecuritySettings | None:
    """The SDK's DNS-rebinding settings for a loopback listener (its own default), stated
    here so that `/metrics` is held to the same Host and Origin rule as `/mcp`."""
    if host not in LOOPBACK_NAMES:
        return None
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )


def metrics_route(server: MailFathomMcp, digest: str, host: str) -> Route:
    """`/metrics` for a scraper presenting the bearer key whose SHA-256 is `digest`."""
    return registry_route(server.telemetry.registry, digest, host)


def registry_route(registry: CollectorRegistry, digest: str, host: str) -> Route:
    """`/metrics` of `registry` for a scraper presenting the bearer key whose SHA-256 is
    `digest`, past the Host and Origin rule of a listener on `host`."""
    security = TransportSecurityMiddleware(transport_security(host))

    async def metrics(request: Request) -> Response:
        refused = await security.validate_request(request)
        if refused is not None:
            return refused
        presented = bearer_digest(request.headers.get("authorization", ""))
        if presented is None:
            return credential_required()
        if hmac.compare_digest(presented, digest):
            return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)
        return invalid_token()

    return Route("/metrics", metrics)


def protected_resource_routes(host: str, tokens: TokenAdmission | None = None) -> list[BaseRoute]:
    """The RFC 9728 metadata of the MCP endpoint, at both of its well-known addresses, and
    where OAuth is configured also at the address its `Resource` implies (a proxy forwarding
    the public path unchanged reaches it there)."""
    security = TransportSecurityMiddleware(transport_security(host))
    oauth = tokens.config if tokens is not None else None

    async def metadata(request: Request) -> Response:
        refused = await security.validate_request(request)
        if refused is not None:
            return refused
        if tokens is not None:
            document = _oauth_document(tokens)
        else:
            document = {
                "resource": _origin(request.scope) + MCP_PATH,
                "bearer_methods_supported": ["header"],
                "resource_name": "MailFathom",
            }
        return Response(json.dumps(document).encode(), media_type="application/json")

    paths = [METADATA_PATH, METADATA_PATH + MCP_PATH]
    if oauth is not None:
        paths.append(METADATA_PATH + _resource_path(oauth))
    return [Route(path, metadata, methods=["GET"]) for path in dict.fromkeys(paths)]


def _resource_path(oauth: McpOAuthConfig) -> str:
    return urlsplit(oauth.resource).path.rstrip("/")


def _oauth_document(tokens: TokenAdmission) -> dict[str, object]:
    return {
        "resource": tokens.config.resource,
        "authorization_servers": list(tokens.config.authorization_servers),
        "scopes_supported": tokens.scopes_supported(),
        "bearer_methods_supported": ["header"],
        "resource_name": "MailFathom",
    }


def build_http_app(
    server: MailFathomMcp,
    config: McpEndpointConfig,
    download: AttachmentDownload | None = None,
    keys: ConsoleKeys | None = None,
    max_body_octets: int = DEFAULT_BODY_OCTETS,
    readiness: Readiness | None = None,
    replicas: Replicas | None = None,
) -> Starlette:
    """The served app. `/metrics` exists only when the configuration names its key,
    download links are served where `download` is given (see `download_route`), keys
    created in the console admit where `keys` is given, and `/livez` and `/readyz` are
    served where `readiness` is given (`health`). A request body over `max_body_octets` is
    refused unread, once its caller is admitted (`body_bound`). With `replicas`, sessions
    and questions in flight are shared with the other replicas through the store
    (`replica_state`, `replica_manager`)."""
    entries = list(config.callers)
    mcp_app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        host=config.host,
        transport_security=transport_security(config.host),
        session_idle_timeout=config.session_idle_seconds,
        # The gate bounds each caller entry below this; the SDK's own limit is a backstop.
        max_sessions=2 * config.sessions_per_caller * max(1, len(entries)),
    )
    if replicas is not None:
        mcp_app = replica_mcp_app(server, replicas, MCP_PATH)
    withhold_refused_values()
    authorization_servers = AuthorizationServerClient()
    tokens = token_admission(config, authorization_servers, server.published_permissions())

    @contextlib.asynccontextmanager
    async def lifespan(_app: Any) -> AsyncIterator[None]:
        try:
            async with authorization_servers, server.session_manager.run():
                yield
        finally:
            server.telemetry.settle()

    routes: list[BaseRoute] = [
        *protected_resource_routes(config.host, tokens),
        Mount("/", app=EnvelopeCheck(mcp_app, server, MCP_PATH)),
    ]
    if config.metrics_api_key_sha256 is not None:
        routes.insert(0, metrics_route(server, config.metrics_api_key_sha256, config.host))
    if download is not None:
        routes.insert(0, download_route(download))
    if readiness is not None:
        routes[:0] = health_routes(readiness, transport_security(config.host))
    app = Starlette(routes=routes, lifespan=lifespan)
    app.add_middleware(
        BodyBound, limit=fixed_limit(max_body_octets), refusal=lambda _scope: too_large()
    )
    app.add_middleware(
        SessionGate,
        path=MCP_PATH,
        caller_key=CALLER_STATE_KEY,
        per_caller=config.sessions_per_caller,
        idle_seconds=config.session_idle_seconds,
        book=SharedSessionBook(replicas) if replicas is not None else None,
    )
    app.add_middleware(AdmissionGate, entries=entries, tokens=tokens, console_keys=keys)
    app.add_middleware(QuietFailures, answer=lambda _scope: failed(), event="mcp.request_failed")
    return app
