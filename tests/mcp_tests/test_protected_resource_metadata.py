"""The endpoint's OAuth protected resource metadata (RFC 9728), read as a client reads it:
from the challenge of a refused request, without any credential."""

from __future__ import annotations

import re

import httpx2
import pytest

from mcp_tests.deployment import Deployment

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "metadata-test", "version": "1"},
    },
}


def _base(url: str) -> str:
    return url.removesuffix("/mcp")


@pytest.mark.parametrize(
    "path", ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]
)
def test_metadata_names_the_endpoint_and_header_bearer_without_authentication(
    mcp_deployment: Deployment, path: str
) -> None:
    answer = httpx2.get(_base(mcp_deployment.url) + path, timeout=30)
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("application/json")
    document = answer.json()
    assert document["resource"] == mcp_deployment.url
    assert document["bearer_methods_supported"] == ["header"]
    # API keys are the credential: no authorization server issues tokens for this endpoint.
    assert "authorization_servers" not in document


def test_a_refused_request_points_at_the_metadata(mcp_deployment: Deployment) -> None:
    # The deployment admits loopback callers without a key, so the key sent here is wrong.
    headers = {
        "Accept": "application/json, text/event-stream",
        "Authorization": "Bearer not-a-configured-key",
    }
    with httpx2.Client(timeout=30) as http:
        refused = http.post(mcp_deployment.url, json=INITIALIZE, headers=headers)
        assert refused.status_code == 401
        challenge = refused.headers["www-authenticate"]
        assert challenge.startswith('Bearer error="invalid_token", ')
        found = re.search(r'resource_metadata="([^"]+)"', challenge)
        assert found is not None
        assert found.group(1) == (
            _base(mcp_deployment.url) + "/.well-known/oauth-protected-resource/mcp"
        )
        document = http.get(found.group(1)).json()
    assert document["resource"] == mcp_deployment.url


def test_metadata_is_held_to_the_host_check_of_the_endpoint(mcp_deployment: Deployment) -> None:
    answer = httpx2.get(
        _base(mcp_deployment.url) + "/.well-known/oauth-protected-resource/mcp",
        headers={"Host": "attacker.example:80"},
        timeout=30,
    )
    assert answer.status_code == 421
