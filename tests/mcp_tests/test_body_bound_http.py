"""The MCP endpoint of `mailfathom serve` reads no request body past its bound: one declared
larger is answered 413 unread, and one streamed in chunks is cut long before its end (the SDK
would otherwise read the whole body into memory before parsing it)."""

from __future__ import annotations

from pathlib import Path

from console.served_keys import served_with_console
from console.streamed_body import stream_body
from mailfathom.domain.delivery_config import MailDeliveryConfig
from mailfathom.domain.request_bounds import tool_request_octets

STREAMED = 200 * 1024 * 1024
JSON = {"Accept": "application/json, text/event-stream"}


def test_an_oversized_request_to_the_endpoint_is_refused_and_cut(tmp_path: Path) -> None:
    bound = tool_request_octets(MailDeliveryConfig().max_body_characters)
    with served_with_console(tmp_path) as served:
        port = int(served.mcp_url.removesuffix("/mcp").rsplit(":", 1)[1])
        declared = stream_body(
            port, "/mcp", bound + 1, JSON, chunked=False, content_type="application/json"
        )
        assert declared.status == 413
        streamed = stream_body(port, "/mcp", STREAMED, JSON, content_type="application/json")
        assert streamed.sent < STREAMED
        assert streamed.status in (413, None)
