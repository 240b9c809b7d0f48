"""`/metrics` only where configured, behind its own key and the Host and Origin check."""

from __future__ import annotations

import httpx2

from mcp_tests.client import call
from mcp_tests.deployment import KEYS
from mcp_tests.hardened import METRICS_KEY, Served


def _bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_metrics_are_not_served_without_their_setting(short_idle_server: Served) -> None:
    url = short_idle_server.metrics_url
    assert httpx2.get(url).status_code == 404
    assert httpx2.get(url, headers=_bearer(KEYS["full"])).status_code == 404
    assert httpx2.get(url, headers=_bearer(METRICS_KEY)).status_code == 404


def test_metrics_are_served_only_to_their_key(bounded_server: Served) -> None:
    call(bounded_server.url, KEYS["full"], "list_accounts", {})
    url = bounded_server.metrics_url
    # Without a key (or with another scheme) a bare challenge, with a wrong key an error.
    for headers, challenge in [
        ({}, "Bearer"),
        ({"Authorization": "Basic bWV0cmljcw=="}, "Bearer"),
        (_bearer(KEYS["full"]), 'Bearer error="invalid_token"'),
    ]:
        refused = httpx2.get(url, headers=headers)
        assert refused.status_code == 401
        assert refused.headers["www-authenticate"] == challenge
    served = httpx2.get(url, headers=_bearer(METRICS_KEY))
    assert served.status_code == 200
    assert 'outcome="success",tool="list_accounts"' in served.text


def test_metrics_keep_the_host_check(bounded_server: Served) -> None:
    port = httpx2.URL(bounded_server.url).port
    rebound = {**_bearer(METRICS_KEY), "Host": f"rebound.example:{port}"}
    assert httpx2.get(bounded_server.metrics_url, headers=rebound).status_code == 421
    foreign = {**_bearer(METRICS_KEY), "Origin": "http://rebound.example"}
    assert httpx2.get(bounded_server.metrics_url, headers=foreign).status_code == 403
