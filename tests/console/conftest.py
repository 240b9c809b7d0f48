"""The console in process: a deployment on an SQLite store, its pages behind Starlette's test
client on the console's own loopback origin, and a clock the test moves."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx2
import lxml.html
import pytest
from starlette.testclient import TestClient

import log_audit
from mailfathom.bootstrap import Services
from mailfathom.domain.config import (
    AccountConfig,
    AccountKind,
    DeploymentConfig,
    FolderMapping,
    StoreConfig,
)
from mailfathom.domain.console import ConsoleConfig
from mailfathom.entrypoints.console.pages import ConsoleUseCases, build_console_app
from mailfathom.entrypoints.console.serving import console_use_cases

ORIGIN = "http://127.0.0.1:8626"
PASSWORD = "correct horse battery staple"
HOSTILE_NAME = "<script>alert('owned')</script> &\u200b Co"
# The name as a page shows it: every character that renders as nothing written out.
HOSTILE_NAME_SHOWN = "<script>alert('owned')</script> &⟦U+200B ZERO WIDTH SPACE⟧ Co"


@dataclass
class Clock:
    now: datetime = field(default_factory=lambda: datetime(2026, 6, 1, 12, 0, tzinfo=UTC))

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@dataclass
class Console:
    client: TestClient
    services: Services
    clock: Clock

    def form_token(self, path: str = "/login") -> str:
        """The CSRF token of the form the page at `path` carries."""
        page = self.client.get(path)
        assert page.status_code == 200
        (token,) = lxml.html.fromstring(page.text).xpath('//input[@name="csrf"]/@value')
        return str(token)

    def sign_in(self, password: str = PASSWORD, **headers: str) -> httpx2.Response:
        token = self.form_token()
        return self.client.post(
            "/login",
            data={"csrf": token, "password": password},
            headers={"Origin": ORIGIN, **headers},
            follow_redirects=False,
        )


def console_config(tmp_path: Path) -> DeploymentConfig:
    account = AccountConfig(
        account_id="home",
        display_name=HOSTILE_NAME,
        kind=AccountKind.LOCAL,
        folders=(FolderMapping("INBOX", "INBOX"),),
    )
    return DeploymentConfig(
        store=StoreConfig(data_dir=tmp_path / "data"),
        accounts=(account,),
        console=ConsoleConfig(enabled=True),
    )


@pytest.fixture
def console(tmp_path: Path) -> Iterator[Console]:
    log_audit.register(PASSWORD, HOSTILE_NAME)
    clock = Clock()
    with Services.open(console_config(tmp_path), clock=clock) as services:
        app = build_console_app(
            ConsoleUseCases(services.console_access, services.console_overview), "127.0.0.1"
        )
        with TestClient(app, base_url=ORIGIN) as client:
            yield Console(client, services, clock)


@pytest.fixture
def signed_in(tmp_path: Path) -> Iterator[Console]:
    """The console over every page's use cases (`console_use_cases`), the owner signed in."""
    log_audit.register(PASSWORD, HOSTILE_NAME)
    clock = Clock()
    with Services.open(console_config(tmp_path), clock=clock) as services:
        services.console_access().set_password(PASSWORD)
        uses = console_use_cases(services)
        with TestClient(build_console_app(uses, "127.0.0.1"), base_url=ORIGIN) as client:
            console = Console(client, services, clock)
            assert console.sign_in().status_code == 303
            yield console


@pytest.fixture
def owned(console: Console) -> Console:
    """The console with the owner password set."""
    console.services.console_access().set_password(PASSWORD)
    return console
