"""An HTTP server on loopback whose every answer is a JSON document far larger than any
metadata or device authorization answer, sent until the client stops reading: how much was
sent tells whether the client read it all."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

FLOOD_OCTETS = 64 * 1024 * 1024
_CHUNK = 64 * 1024


@dataclass
class Flood:
    url: str
    sent: int = 0
    done: threading.Event = field(default_factory=threading.Event)


@contextmanager
def flood_host() -> Iterator[Flood]:
    flood = Flood(url="")

    class Handler(BaseHTTPRequestHandler):
        def _flood(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            self.rfile.read(length)
            head = b'{"padding": "'
            tail = b'"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(FLOOD_OCTETS))
            self.end_headers()
            sent = 0
            try:
                self.wfile.write(head)
                sent = len(head)
                while sent < FLOOD_OCTETS - len(tail):
                    piece = min(_CHUNK, FLOOD_OCTETS - len(tail) - sent)
                    self.wfile.write(b"0" * piece)
                    sent += piece
                self.wfile.write(tail)
                sent += len(tail)
            except OSError:
                pass
            finally:
                flood.sent = sent
                flood.done.set()

        do_GET = _flood
        do_POST = _flood

        def log_message(self, format: str, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    flood.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield flood
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
