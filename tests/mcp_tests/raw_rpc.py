"""JSON-RPC spoken to the endpoint by hand, in either protocol generation, for the requests the
official client never sends: a malformed envelope, an odd id, a method this server has no
use for."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx2
from mcp.shared.inbound import encode_header_value

from mcp_tests.hardened import ACCEPT, HANDSHAKE_VERSION, close_session, open_session

MODERN_VERSION = "2026-07-28"
# What a request of the modern generation carries in `params._meta`.
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
}
# The parameter each method names its subject by, sent again in `Mcp-Name`.
NAMED_BY = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}

GENERATIONS = ["handshake", "handshake-unopened", "modern"]
"""Within an open session of the handshake generation, outside any session of it (as a
request that would open one), and as a single exchange of the modern generation."""


@dataclass(frozen=True)
class Endpoint:
    """The endpoint reached as the caller whose API key is `key`, in one generation."""

    url: str
    key: str
    generation: str
    session: str | None = None

    @classmethod
    @contextmanager
    def reached(
        cls, http: httpx2.Client, url: str, key: str, generation: str
    ) -> Iterator[Endpoint]:
        """The endpoint in `generation`, within a session of its own where it has them."""
        if generation != "handshake":
            yield cls(url, key, generation)
            return
        session = open_session(http, url, key)
        try:
            yield cls(url, key, generation, session)
        finally:
            close_session(http, url, key, session)

    def post(self, http: httpx2.Client, body: Any) -> httpx2.Response:
        """`body` (bytes as they are, anything else as JSON) posted as this generation
        sends it: a request object of the modern generation gains its envelope and headers."""
        headers = {
            "Authorization": f"Bearer {self.key}",
            "Accept": ACCEPT,
            "Content-Type": "application/json",
        }
        if self.session is not None:
            headers["Mcp-Session-Id"] = self.session
            headers["Mcp-Protocol-Version"] = HANDSHAKE_VERSION
        if self.generation == "modern":
            headers["Mcp-Protocol-Version"] = MODERN_VERSION
            body = _enveloped(body, headers)
        content = body if isinstance(body, bytes) else json.dumps(body).encode()
        return http.post(self.url, content=content, headers=headers)

    def ask(self, http: httpx2.Client, body: Any) -> dict[str, Any]:
        """The JSON-RPC message answering `body`, sent as a response body or an event."""
        return answer(self.post(http, body))


def _enveloped(body: Any, headers: dict[str, str]) -> Any:
    if not isinstance(body, dict) or not isinstance(body.get("method"), str):
        return body
    headers["Mcp-Method"] = body["method"]
    params = body.get("params", {})
    if not isinstance(params, dict):
        return body
    named = params.get(NAMED_BY.get(body["method"], ""))
    if isinstance(named, str):
        headers["Mcp-Name"] = encode_header_value(named)
    return {**body, "params": {**params, "_meta": MODERN_META}}


def answer(response: httpx2.Response) -> dict[str, Any]:
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        events = [
            line.removeprefix("data:").strip()
            for line in response.text.splitlines()
            if line.startswith("data:") and line.strip() != "data:"
        ]
        found: dict[str, Any] = json.loads(events[-1])
        return found
    parsed: dict[str, Any] = response.json()
    return parsed


def request(method: str, params: dict[str, Any] | None = None, id: Any = 7) -> dict[str, Any]:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        body["params"] = params
    return body
