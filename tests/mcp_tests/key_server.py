"""A small authorization server on loopback for the token verifier's own tests: it publishes
RFC 8414 metadata and a JWK Set of keys the test made, answers introspection from answers
the test set, and counts what it was asked. Tokens are signed in the test with the same keys.
While `released` is clear every request is held, counted but unanswered, until it is set: a
slow or hanging issuer, as long as the test needs. The most introspection requests it held at
once is `most_in_flight`.
"""

from __future__ import annotations

import base64
import json
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote_plus

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

INTROSPECTION_CLIENT = ("resource-server", "introspection-secret-" + uuid.uuid4().hex)
HELD_SECONDS = 60.0


@dataclass
class SigningKey:
    kid: str
    algorithm: str
    private: Any

    @classmethod
    def rsa(cls, algorithm: str = "RS256") -> SigningKey:
        private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        return cls("rsa-" + uuid.uuid4().hex[:8], algorithm, private)

    @classmethod
    def ec(cls) -> SigningKey:
        return cls("ec-" + uuid.uuid4().hex[:8], "ES256", ec.generate_private_key(ec.SECP256R1()))

    def jwk(self) -> dict[str, Any]:
        public = self.private.public_key()
        exported = (
            RSAAlgorithm.to_jwk(public, as_dict=True)
            if self.algorithm.startswith(("RS", "PS"))
            else ECAlgorithm.to_jwk(public, as_dict=True)
        )
        return {**exported, "kid": self.kid, "use": "sig"}

    def sign(self, claims: dict[str, Any], **header: Any) -> str:
        headers = {"kid": self.kid, **header}
        return jwt.encode(claims, self.private, algorithm=self.algorithm, headers=headers)


def _released() -> threading.Event:
    event = threading.Event()
    event.set()
    return event


@dataclass
class KeyServer:
    issuer: str
    keys: list[SigningKey] = field(default_factory=list)
    answers: dict[str, dict[str, Any]] = field(default_factory=dict)
    counts: Counter[str] = field(default_factory=Counter)
    metadata_issuer: str | None = None
    up: bool = True
    jwks_path: str = "/jwks"
    released: threading.Event = field(default_factory=_released)
    client: tuple[str, str] = INTROSPECTION_CLIENT
    in_flight: int = 0
    most_in_flight: int = 0
    guard: threading.Lock = field(default_factory=threading.Lock)

    @property
    def jwks_uri(self) -> str:
        return self.issuer + self.jwks_path

    @property
    def introspection_endpoint(self) -> str:
        return self.issuer + "/introspect"

    def claims(
        self, audience: str | list[str], *, subject: str = "person-1", **more: Any
    ) -> dict[str, Any]:
        now = int(time.time())
        return {
            "iss": self.issuer,
            "sub": subject,
            "aud": audience,
            "iat": now,
            "exp": now + 300,
            "jti": uuid.uuid4().hex,
            "client_id": "client-1",
            "scope": "mailfathom.mail.read",
            **more,
        }


def _basic_client(authorization: str) -> tuple[str, str] | None:
    """The client id and secret of a Basic header, each form-decoded (RFC 6749 section
    2.3.1)."""
    scheme, _, encoded = authorization.partition(" ")
    if scheme != "Basic":
        return None
    try:
        pair = base64.b64decode(encoded, validate=True).decode("utf-8")
    except ValueError:
        return None
    client, colon, secret = pair.partition(":")
    if not colon:
        return None
    return unquote_plus(client), unquote_plus(secret)


def _handler(state: KeyServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

        def _json(self, status: int, document: object) -> None:
            body = json.dumps(document).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            asked = {
                "/.well-known/oauth-authorization-server": "metadata",
                state.jwks_path: "jwks",
            }.get(self.path)
            if asked is not None:
                state.counts[asked] += 1
            state.released.wait(HELD_SECONDS)
            if not state.up:
                self._json(503, {"error": "down"})
            elif asked == "metadata":
                self._json(
                    200,
                    {
                        "issuer": state.metadata_issuer or state.issuer,
                        "jwks_uri": state.jwks_uri,
                        "introspection_endpoint": state.introspection_endpoint,
                    },
                )
            elif asked == "jwks":
                self._json(200, {"keys": [key.jwk() for key in state.keys]})
            else:
                self._json(404, {"error": "not_found"})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            form = parse_qs(self.rfile.read(length).decode())
            if self.path != "/introspect" or not state.up:
                self._json(404, {"error": "not_found"})
                return
            with state.guard:
                state.counts["introspection"] += 1
                state.in_flight += 1
                state.most_in_flight = max(state.most_in_flight, state.in_flight)
            state.released.wait(HELD_SECONDS)
            # Counted out before answering: the client may ask again once it has the answer.
            with state.guard:
                state.in_flight -= 1
            if _basic_client(self.headers.get("Authorization", "")) != state.client:
                self._json(401, {"error": "invalid_client"})
                return
            token = form.get("token", [""])[0]
            self._json(200, state.answers.get(token, {"active": False}))

    return Handler


class _Server(ThreadingHTTPServer):
    request_queue_size = 128

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that gave up on a held request is gone when the answer is written.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


@contextmanager
def key_server() -> Iterator[KeyServer]:
    httpd = _Server(("127.0.0.1", 0), BaseHTTPRequestHandler)
    state = KeyServer(issuer=f"http://127.0.0.1:{httpd.server_address[1]}")
    httpd.RequestHandlerClass = _handler(state)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield state
    finally:
        state.released.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join()
