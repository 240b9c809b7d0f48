"""An HTTP server on loopback publishing whatever metadata documents a test gives it, for
what a real authorization server would never serve: metadata naming another issuer, broken
documents, metadata at the OpenID Connect location only."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class _Handler(BaseHTTPRequestHandler):
    server: _Host

    def do_GET(self) -> None:
        self.server.asked.append(self.path)
        status, body = self.server.documents.get(self.path, (404, b""))
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


class _Host(ThreadingHTTPServer):
    documents: dict[str, tuple[int, bytes]]
    asked: list[str]


class MetadataHost:
    def __init__(self, server: _Host) -> None:
        self._server = server

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def asked(self) -> list[str]:
        return self._server.asked

    def publish(self, path: str, document: object, status: int = 200) -> None:
        body = document if isinstance(document, bytes) else json.dumps(document).encode()
        self._server.documents[path] = (status, body)


@contextmanager
def metadata_host() -> Iterator[MetadataHost]:
    server = _Host(("127.0.0.1", 0), _Handler)
    server.documents, server.asked = {}, []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield MetadataHost(server)
    finally:
        server.shutdown()
        server.server_close()


def metadata(issuer: str, **extra: object) -> Mapping[str, object]:
    return {
        "issuer": issuer,
        "token_endpoint": f"{issuer}/token",
        "authorization_endpoint": f"{issuer}/authorize",
        "response_types_supported": ["code"],
        **extra,
    }
