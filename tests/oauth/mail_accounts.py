"""IMAP accounts that log in with OAuth against the test authorization server and the
OAuth-validating Dovecot: the grant, the account's configuration, and a token endpoint that
counts what reaches it."""

from __future__ import annotations

import subprocess
import sys
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx2

import log_audit
from mailfathom.adapters.oauth import tokens as tokens_module
from mailfathom.adapters.oauth.endpoint import TokenEndpoint, TokenResponse
from mailfathom.adapters.oauth.tokens import AccessTokens
from mailfathom.domain.config import AccountConfig, ImapConnection, SecretRef, TlsMode
from mailfathom.domain.oauth import (
    ConnectionAuth,
    OAuthCredential,
    OAuthProvider,
    SaslMechanism,
)
from servers.dovecot import ImapAccount
from servers.oauth import OAuthServer, device_grant
from sync.helpers import imap_account_config

SCOPE = "mail"


class FrozenClock:
    """A clock that never moves: the cache takes a token as fresh however old it is."""

    def __call__(self) -> float:
        return 1000.0


@contextmanager
def token_lifetime(server: OAuthServer, seconds: int) -> Iterator[None]:
    """Access tokens issued for `seconds` meanwhile; the server's hour afterwards."""
    server.set_access_token_lifetime(seconds)
    try:
        yield
    finally:
        server.set_access_token_lifetime(3600)


def grant(server: OAuthServer, account: ImapAccount, directory: Path) -> tuple[str, Path]:
    """A public client and the person's device grant for `account`; the refresh token is
    written to a file only its owner reads. Returns (client id, refresh token file)."""
    client_id = f"mail-{uuid.uuid4().hex[:8]}"
    server.add_client(client_id, scope=SCOPE)
    path = directory / f"{client_id}.refresh"
    write_grant(server, client_id, account, path)
    return client_id, path


def write_grant(server: OAuthServer, client_id: str, account: ImapAccount, path: Path) -> None:
    """The person grants access (again): the new refresh token replaces the file's."""
    tokens = device_grant(server, client_id=client_id, subject=account.username, scope=SCOPE)
    log_audit.register(tokens["access_token"], tokens["refresh_token"])
    path.write_text(tokens["refresh_token"] + "\n")
    path.chmod(0o600)


def oauth_account_config(
    account: ImapAccount,
    client_id: str,
    refresh_file: Path,
    token_endpoint: str,
    *,
    mechanism: SaslMechanism = SaslMechanism.AUTO,
    margin: float = 60.0,
    **overrides: Any,
) -> AccountConfig:
    base = imap_account_config(account)
    return replace(
        base,
        imap=ImapConnection(
            host=account.host,
            port=account.port,
            username=account.username,
            secret=None,
            tls=TlsMode.NONE,
            timeout_seconds=30,
            auth=ConnectionAuth.OAUTH2,
        ),
        oauth=OAuthCredential(
            provider=OAuthProvider.GENERIC,
            client_id=client_id,
            refresh_token=SecretRef(file=refresh_file, origin="Accounts[0].OAuth.RefreshToken"),
            token_endpoint=token_endpoint,
            scopes=(SCOPE,),
            mechanism=mechanism,
            refresh_margin_seconds=margin,
        ),
        **overrides,
    )


def oauth_account_toml(account: AccountConfig) -> str:
    """The account's `[[Accounts]]` block of a configuration file, for a command run in a
    process of its own."""
    assert account.imap is not None
    assert account.oauth is not None
    return f"""
[[Accounts]]
Id = "{account.account_id}"
Kind = "imap"
[Accounts.Imap]
Host = "{account.imap.host}"
Port = {account.imap.port}
Username = "{account.imap.username}"
Tls = "none"
Auth = "oauth2"
[Accounts.OAuth]
Provider = "generic"
ClientId = "{account.oauth.client_id}"
RefreshToken = {{ File = "{account.oauth.refresh_token.file}" }}
TokenEndpoint = "{account.oauth.token_endpoint}"
Scopes = ["mail"]
[[Accounts.Folders]]
Remote = "INBOX"
Role = "Inbox"
"""


def mfctl_accounts(config: Path) -> subprocess.CompletedProcess[str]:
    """`mfctl accounts` in a process of its own, as an operator runs it."""
    return subprocess.run(
        [sys.executable, "-m", "mailfathom", "accounts", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def token_active(server: OAuthServer, token: str) -> bool:
    """What the authorization server's introspection (RFC 7662) says of `token`."""
    answer = httpx2.post(
        server.introspection_endpoint,
        data={"token": token},
        auth=server.introspection_client,
        timeout=30.0,
    )
    answer.raise_for_status()
    return bool(answer.json().get("active"))


@dataclass
class CountingEndpoint:
    """Forwards every POST to the real token endpoint, counting them (refused ones too)."""

    url: str
    requests: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


@contextmanager
def counting_token_endpoint(target: str) -> Iterator[CountingEndpoint]:
    state = CountingEndpoint(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            with state.lock:
                state.requests += 1
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            answer = httpx2.post(
                target,
                content=body,
                headers={"Content-Type": self.headers.get("Content-Type", "")},
                timeout=30.0,
            )
            self.send_response(answer.status_code)
            self.send_header("Content-Type", answer.headers.get("Content-Type", ""))
            self.send_header("Content-Length", str(len(answer.content)))
            self.end_headers()
            self.wfile.write(answer.content)

        def log_message(self, format: str, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}/token"
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


class RecordingEndpoint(TokenEndpoint):
    """The token client, registering every token it receives with the log audit, so a test
    fails if any of them reaches a log line."""

    def request(
        self,
        endpoint: str,
        *,
        grant_type: str,
        client_id: str,
        client_secret: str | None,
        params: Mapping[str, str],
    ) -> TokenResponse:
        answer = super().request(
            endpoint,
            grant_type=grant_type,
            client_id=client_id,
            client_secret=client_secret,
            params=params,
        )
        log_audit.register(answer.access_token, answer.refresh_token)
        return answer


@contextmanager
def process_tokens_recorded(clock: Callable[[], float] | None = None) -> Iterator[AccessTokens]:
    """This process's access tokens, for the test's duration, taken by a client whose every
    token the log audit knows."""
    endpoint = RecordingEndpoint()
    tokens = AccessTokens(endpoint) if clock is None else AccessTokens(endpoint, clock=clock)
    before = tokens_module._process_tokens
    tokens_module._process_tokens = tokens
    try:
        yield tokens
    finally:
        tokens_module._process_tokens = before
        endpoint.close()
