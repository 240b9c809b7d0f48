"""A token endpoint on loopback that answers what a test tells it to, and records each
request's form. Only for the unit tests of the token client; the real-server tests use the
authorization server in tests/servers/oauth.py."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

Answer = tuple[int, bytes]
Responder = Callable[[dict[str, str]], Answer]


def token_answer(access_token: str, expires_in: object = 300, **extra: object) -> Answer:
    body = {"access_token": access_token, "token_type": "Bearer", "expires_in": expires_in}
    return 200, json.dumps(body | extra).encode()


def error_answer(error: str, status: int = 400) -> Answer:
    return status, json.dumps({"error": error, "error_description": "said the server"}).encode()


@dataclass
class FakeTokenServer:
    url: str
    requests: list[dict[str, str]] = field(default_factory=list)
    responder: Responder = lambda form: token_answer("unset")
    lock: threading.Lock = field(default_factory=threading.Lock)
    # Set before answering: a test holds it to keep a request in flight.
    gate: threading.Event = field(default_factory=threading.Event)


@contextmanager
def fake_token_server() -> Iterator[FakeTokenServer]:
    state = FakeTokenServer(url="")
    state.gate.set()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(length).decode("ascii")
            form = {k: v[0] for k, v in parse_qs(raw).items()}
            form["_content_type"] = self.headers.get("Content-Type", "")
            with state.lock:
                state.requests.append(form)
            state.gate.wait(10)
            status, body = state.responder(form)
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}/token"
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield state
    finally:
        state.gate.set()
        server.shutdown()
        server.server_close()
        thread.join(5)
