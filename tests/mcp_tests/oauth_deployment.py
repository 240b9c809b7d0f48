"""The shared deployment served as an OAuth 2.1 resource server of the test authorization
server, beside its API keys; and the official MCP client's OAuth support, driven by a test
that plays the person approving at once."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeVar
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
from mcp import Client
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)
from pydantic import AnyUrl

from log_audit import register_all
from mcp_tests.deployment import Deployment, _free_port
from mcp_tests.hardened import Served, serve_text
from servers.oauth import OAuthServer

T = TypeVar("T")

# The people the authorization server signs in, by the entry that admits each.
SUBJECTS = {
    "person": "subject-person-" + uuid.uuid4().hex[:8],
    "reading-person": "subject-reader-" + uuid.uuid4().hex[:8],
    "granted-person": "subject-granted-" + uuid.uuid4().hex[:8],
    "stranger": "subject-stranger-" + uuid.uuid4().hex[:8],
}
OPEN_ENTRY = '[[McpEndpoint.Callers]]\nName = "local"\nCredential = "none"\n'
CALLBACK = "http://127.0.0.1:45871/callback"


def oauth_endpoint(issuer: str, resource: str, table: str = "") -> str:
    """`[McpEndpoint.OAuth]` naming `issuer`, and the entries its people are admitted by:
    `person` holds what their token's scopes grant, `reading-person` at most reading, and
    `granted-person` reading whatever the token's scopes say. The stranger has no entry."""
    register_all(list(SUBJECTS.values()))
    return f"""
[McpEndpoint.OAuth]
Resource = "{resource}"
AuthorizationServers = ["{issuer}"]
{table}

[[McpEndpoint.Callers]]
Name = "person"
Credential = "oauth"
Subject = "{SUBJECTS["person"]}"

[[McpEndpoint.Callers]]
Name = "reading-person"
Credential = "oauth"
Subject = "{SUBJECTS["reading-person"]}"
Permissions = ["mailfathom.mail.read"]

[[McpEndpoint.Callers]]
Name = "granted-person"
Credential = "oauth"
Subject = "{SUBJECTS["granted-person"]}"
Issuer = "{issuer}"
Permissions = ["mailfathom.mail.read"]
PermissionsFromTokenScopes = false
"""


@contextmanager
def serve_oauth(
    base: Deployment, issuer: str, table: str = "", *, resource: str | None = None
) -> Iterator[Served]:
    """`base` served with its API-key entries and the OAuth entries above, and without its
    entry admitting loopback callers that present nothing (a client must meet the 401).
    `resource` is the endpoint's address as clients reach it: the listener's when None."""
    text = base.config_path.read_text("utf-8")
    assert OPEN_ENTRY in text
    port = _free_port()
    listener = f"http://127.0.0.1:{port}/mcp"
    text = text.replace(OPEN_ENTRY, "") + oauth_endpoint(issuer, resource or listener, table)
    with serve_text(base, text, port) as served:
        assert served.url == listener
        yield served


class MemoryStorage(TokenStorage):
    """Where the client keeps its registration and tokens: in memory, for one test."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


@dataclass
class Person:
    """The person at the browser: opens the authorization address, which the test server
    answers at once with a redirect back, and hands the client what the redirect carried."""

    answered: dict[str, str] | None = None

    async def open(self, authorization_url: str) -> None:
        async with httpx2.AsyncClient(timeout=30) as http:
            answer = await http.get(authorization_url)
        assert answer.status_code in (302, 303), answer.status_code
        location = answer.headers["location"]
        assert location.startswith(CALLBACK + "?")
        self.answered = {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}

    async def come_back(self) -> AuthorizationCodeResult:
        assert self.answered is not None
        assert "code" in self.answered, self.answered
        return AuthorizationCodeResult(
            code=self.answered["code"],
            state=self.answered.get("state"),
            iss=self.answered.get("iss"),
        )


def with_oauth_client(
    url: str,
    work: Callable[[Client, OAuthClientProvider], Awaitable[T]],
    *,
    mode: str = "auto",
) -> T:
    """Run `work` with the official client and its OAuth support against `url`, from an empty
    token store: discovery, registration and the authorization happen as the client needs."""

    async def run() -> T:
        person = Person()
        provider = OAuthClientProvider(
            server_url=url,
            client_metadata=OAuthClientMetadata(
                redirect_uris=[AnyUrl(CALLBACK)],
                client_name="mailfathom-oauth-test",
                grant_types=["authorization_code", "refresh_token"],
            ),
            storage=MemoryStorage(),
            redirect_handler=person.open,
            callback_handler=person.come_back,
        )
        async with (
            httpx2.AsyncClient(auth=provider, timeout=httpx2.Timeout(30, read=60)) as http,
            Client(streamable_http_client(url, http_client=http), mode=mode) as client,
        ):
            return await work(client, provider)

    return anyio.run(run)


def minted(server: OAuthServer, who: str, audience: str, *scopes: str, **options: object) -> str:
    """A token the authorization server signs for the person `who` (a key of `SUBJECTS`)."""
    token = server.mint_access_token(
        SUBJECTS[who],
        audience=audience,
        scopes=list(scopes),
        **options,  # type: ignore[arg-type]
    )
    register_all([token])
    return token
