"""The owner's console for the passkey and attack tests: served in this process under
uvicorn on a loopback port, over a deployment of a local account in an SQLite store whose
passkeys are made for `localhost` at that port (the defaults), so the test reads and moves
the store itself. And Chromium's virtual authenticator, driven through the debugging
protocol's `WebAuthn` domain, standing for the owner's device."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import uvicorn
from playwright.sync_api import CDPSession, Page
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from log_audit import register
from mailfathom.bootstrap import Services, utc_now
from mailfathom.domain.config import (
    AccountConfig,
    AccountKind,
    DeploymentConfig,
    FolderMapping,
    StoreConfig,
)
from mailfathom.domain.console import ConsoleConfig
from mailfathom.entrypoints.console.pages import build_console_app
from mailfathom.entrypoints.console.serving import console_use_cases
from mcp_tests.deployment import _free_port
from waiting import wait_for


@dataclass(frozen=True)
class Seen:
    """A request as the console received it, and the status it answered."""

    method: str
    path: str
    origin: str | None
    cookie: bool
    status: int


class Recording:
    """The console's application, noting every request it answers: what a browser hides
    from the page (a refused cross-origin answer) the test still reads here."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.seen: list[Seen] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}

        async def noted(message: Message) -> None:
            if message["type"] == "http.response.start":
                self.seen.append(
                    Seen(
                        scope["method"],
                        scope["path"],
                        headers.get("origin"),
                        "cookie" in headers,
                        int(message["status"]),
                    )
                )
            await send(message)

        await self.app(scope, receive, noted)


@dataclass(frozen=True)
class OwnerConsole:
    services: Services
    port: int
    password: str
    recording: Recording

    def answered(self, method: str, path: str) -> list[Seen]:
        return [s for s in self.recording.seen if (s.method, s.path) == (method, path)]

    @property
    def named(self) -> str:
        """The origin passkeys work at."""
        return f"http://localhost:{self.port}"

    @property
    def numbered(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def first_passkey_code(self) -> str:
        """A first-passkey code, as `mailfathom console first-passkey` prints one."""
        code = self.services.console_passkeys().first_enrolment_code()
        assert code is not None
        return code

    def create_first_passkey(self, page: Page) -> None:
        """On the sign-in page, create the owner's first passkey with a new code."""
        code = self.first_passkey_code()
        page.goto(self.named + "/login")
        page.locator("#passkey-code").fill(code)
        page.locator("#passkey-button").click()
        page.wait_for_url(self.named + "/")


@contextmanager
def owner_console(
    root: Path, *, password: bool, clock: Callable[[], datetime] = utc_now
) -> Iterator[OwnerConsole]:
    """A console with no owner credential, or with an owner password set; its use cases
    read `clock` (a test may move it to let a sign-in grow old)."""
    port = _free_port()
    account = AccountConfig(
        account_id="work",
        display_name="Work",
        kind=AccountKind.LOCAL,
        folders=(FolderMapping("INBOX", "INBOX"),),
    )
    config = DeploymentConfig(
        store=StoreConfig(data_dir=root / "data"),
        accounts=(account,),
        console=ConsoleConfig(enabled=True, host="127.0.0.1", port=port),
    )
    secret = "owner-" + uuid.uuid4().hex
    register(secret)
    with Services.open(config, clock=clock) as services:
        if password:
            services.console_access().set_password(secret)
        recording = Recording(build_console_app(console_use_cases(services), "127.0.0.1"))
        server = uvicorn.Server(
            uvicorn.Config(
                recording,
                host="127.0.0.1",
                port=port,
                log_level="warning",
            )
        )
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        try:
            wait_for(lambda: server.started, "the console listens")
            yield OwnerConsole(services, port, secret, recording)
        finally:
            server.should_exit = True
            thread.join(timeout=30)


class VirtualAuthenticator:
    """A platform authenticator inside Chromium for one page: CTAP2 over the internal
    transport, keeping resident keys, verifying its user, present without a touch."""

    def __init__(self, page: Page) -> None:
        self.session: CDPSession = page.context.new_cdp_session(page)
        self.session.send("WebAuthn.enable", {"enableUI": False})
        added = self.session.send(
            "WebAuthn.addVirtualAuthenticator",
            {
                "options": {
                    "protocol": "ctap2",
                    "transport": "internal",
                    "hasResidentKey": True,
                    "hasUserVerification": True,
                    "isUserVerified": True,
                    "automaticPresenceSimulation": True,
                }
            },
        )
        self.authenticator_id = str(added["authenticatorId"])

    def credentials(self) -> list[dict[str, Any]]:
        found = self.session.send(
            "WebAuthn.getCredentials", {"authenticatorId": self.authenticator_id}
        )
        return list(found["credentials"])

    def add(self, credential: dict[str, Any]) -> None:
        self.session.send(
            "WebAuthn.addCredential",
            {"authenticatorId": self.authenticator_id, "credential": credential},
        )
