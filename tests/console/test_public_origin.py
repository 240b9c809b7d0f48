"""The console with `[Console] PublicOrigin` in process: the configured origin is its own,
whatever `Host` the proxy passes, and the first passkey is never offered behind the proxy
(every visitor there is the proxy's loopback address)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from starlette.testclient import TestClient

import log_audit
from console.conftest import PASSWORD, console_config
from mailfathom.bootstrap import Services
from mailfathom.domain.console import ConsoleConfig
from mailfathom.entrypoints.console.pages import build_console_app
from mailfathom.entrypoints.console.serving import console_use_cases

PUBLIC = "https://localhost:8443"
LOOPBACK_PEER = ("127.0.0.1", 50000)


def _client(
    root: Path, public: str | None, host: str, *, password: bool = False
) -> Iterator[TestClient]:
    log_audit.register(PASSWORD)
    console = ConsoleConfig(enabled=True, public_origin=public)
    with Services.open(replace(console_config(root), console=console)) as services:
        if password:
            services.console_access().set_password(PASSWORD)
        else:
            # A first-passkey code waiting: only where the visitor is seen as local is
            # the first passkey offered.
            assert services.console_passkeys().first_enrolment_code() is not None
        app = build_console_app(console_use_cases(services), "127.0.0.1", public_origin=public)
        with TestClient(app, base_url=f"http://{host}", client=LOOPBACK_PEER) as client:
            yield client


@pytest.mark.parametrize("host", ["localhost:8443", "localhost:8626", "127.0.0.1:8626"])
def test_behind_the_proxy_the_first_passkey_is_not_offered(tmp_path: Path, host: str) -> None:
    for client in _client(tmp_path, PUBLIC, host):
        page = client.get("/login")
        assert page.status_code == 200
        assert 'data-passkey="register"' not in page.text
        assert page.headers["set-cookie"].startswith("__Host-mf_console=")


def test_without_a_public_origin_the_machine_itself_is_offered_it(tmp_path: Path) -> None:
    for client in _client(tmp_path, None, "localhost:8626"):
        page = client.get("/login")
        assert 'data-passkey="register"' in page.text
        assert page.headers["set-cookie"].startswith("mf_console=")


@pytest.mark.parametrize("host", ["localhost:8443", "127.0.0.1:8626"])
def test_a_form_counts_only_from_the_public_origin(tmp_path: Path, host: str) -> None:
    for client in _client(tmp_path, PUBLIC, host, password=True):
        page = client.get("/login")
        cookie = {"Cookie": page.headers["set-cookie"].split(";", 1)[0]}
        csrf = page.text.split('name="csrf" value="', 1)[1].split('"', 1)[0]
        form = {"csrf": csrf, "password": "wrong but well formed"}
        direct = client.post("/login", data=form, headers={**cookie, "Origin": f"http://{host}"})
        assert direct.status_code == 403
        assert 'id="refusal"' in direct.text
        public = client.post("/login", data=form, headers={**cookie, "Origin": PUBLIC})
        assert public.status_code == 403
        assert 'id="refusal"' not in public.text
