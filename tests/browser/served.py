"""A small HTTP server on loopback, serving the pages a browser test writes itself.

It stands for any origin other than the console: the harness's own pages, and a page of
another site that tries to act on the console from the browser.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Answer:
    body: str
    status: int = 200
    content_type: str = "text/html; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Request:
    method: str
    path: str
    body: bytes


@dataclass
class Site:
    """Pages by path; every request received is recorded in `requests`."""

    pages: dict[str, Answer]
    port: int = 0
    requests: list[Request] = field(default_factory=list)

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str) -> str:
        return self.origin + path


@contextmanager
def serve(pages: dict[str, Answer]) -> Iterator[Site]:
    site = Site(pages)

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            site.requests.append(Request(self.command, self.path, self.rfile.read(length)))
            answer = site.pages.get(self.path.split("?", 1)[0]) or Answer("not found", 404)
            data = answer.body.encode("utf-8")
            self.send_response(answer.status)
            self.send_header("Content-Type", answer.content_type)
            self.send_header("Content-Length", str(len(data)))
            for name, value in answer.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        do_GET = _answer
        do_POST = _answer

        def log_message(self, format: str, *args: object) -> None:
            """Nothing is logged: a test reads `Site.requests`."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    site.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield site
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
