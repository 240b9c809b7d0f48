"""`mailfathom serve` believes no forwarded header, on the console's listener or the MCP
endpoint's: a client on this machine that writes `X-Forwarded-For` stays the loopback peer it
is, and one that writes `X-Forwarded-Proto: https` does not make a plain HTTP request count
as HTTPS (the console's cookie and own origin, the endpoint's metadata)."""

from __future__ import annotations

from pathlib import Path

import httpx2
import lxml.html

from console.served_keys import served_with_console
from mailfathom.domain.console import FREE_FAILURES_PER_CLIENT
from mcp_tests.hardened import ACCEPT, initialize_body


def _csrf(answer: httpx2.Response) -> str:
    (csrf,) = lxml.html.fromstring(answer.text).xpath('//input[@name="csrf"]/@value')
    return str(csrf)


def test_wrong_passwords_under_changing_forwarded_addresses_count_against_the_peer(
    tmp_path: Path,
) -> None:
    with served_with_console(tmp_path) as served, httpx2.Client(base_url=served.origin) as client:
        csrf = _csrf(client.get("/login"))
        statuses = []
        for attempt in range(FREE_FAILURES_PER_CLIENT + 1):
            answer = client.post(
                "/login",
                data={"csrf": csrf, "password": "not the owner password"},
                headers={
                    "Origin": served.origin,
                    "X-Forwarded-For": f"203.0.113.{attempt + 1}",
                    "Forwarded": f"for=198.51.100.{attempt + 1}",
                    "X-Real-IP": f"192.0.2.{attempt + 1}",
                },
            )
            statuses.append(answer.status_code)
        assert statuses == [403] * FREE_FAILURES_PER_CLIENT + [429]


def test_a_forwarded_https_scheme_changes_neither_the_cookie_nor_the_own_origin(
    tmp_path: Path,
) -> None:
    claimed = {"X-Forwarded-Proto": "https", "X-Forwarded-Host": "127.0.0.1"}
    with served_with_console(tmp_path) as served, httpx2.Client(base_url=served.origin) as client:
        form = client.get("/login", headers=claimed)
        cookie = form.headers["set-cookie"]
        assert cookie.startswith("mf_console=")
        assert "secure" not in cookie.lower()
        csrf = _csrf(form)
        as_https = served.origin.replace("http://", "https://")
        refused = client.post(
            "/login",
            data={"csrf": csrf, "password": served.password},
            headers={**claimed, "Origin": as_https},
        )
        assert refused.status_code == 403
        assert "set-cookie" not in refused.headers
        signed_in = client.post(
            "/login",
            data={"csrf": csrf, "password": served.password},
            headers={**claimed, "Origin": served.origin},
        )
        assert signed_in.status_code == 303
        assert signed_in.headers["set-cookie"].startswith("mf_console=")


def test_the_endpoint_keeps_the_loopback_peer_and_its_own_scheme(tmp_path: Path) -> None:
    """The open loopback entry admits the loopback peer whatever address it claims to
    forward for, and the metadata names the address the request really reached."""
    with served_with_console(tmp_path) as served, httpx2.Client(timeout=30) as http:
        claimed = {"X-Forwarded-For": "203.0.113.7", "X-Forwarded-Proto": "https"}
        endpoint = served.mcp_url.removesuffix("/mcp")
        metadata = http.get(endpoint + "/.well-known/oauth-protected-resource", headers=claimed)
        assert metadata.status_code == 200
        assert metadata.json()["resource"] == served.mcp_url
        admitted = http.post(
            served.mcp_url, json=initialize_body(), headers={**claimed, "Accept": ACCEPT}
        )
        assert admitted.status_code == 200, admitted.text
