"""The one-shot HTTP listener a browser is redirected back to (RFC 8252 section 7.3).

It listens on 127.0.0.1 and a port the system picks, and on [::1] at the same port where
the machine has IPv6: a redirect to `localhost` (what Microsoft registers) may be sent over
either, and another user of the machine must not be able to take the half left free and
hear the answer. It waits for one authorization response: a request to its root whose
`state` is the one the request sent. Another `state` (anybody on the machine can reach a
loopback port) is answered 400 and waited past, as is anything else (404: a browser asking
for an icon), so nobody but the browser can end the wait. The request line and the query
are never written anywhere: they carry the authorization code. The page shown to the person
says only whether they can go back to the terminal.
"""

from __future__ import annotations

import errno
import hmac
import selectors
import socket
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, HTTPServer
from types import TracebackType
from urllib.parse import parse_qsl, urlsplit

_PAGE = (
    "<!doctype html><html><head><meta charset='utf-8'><title>MailFathom</title></head>"
    "<body><p>{text}</p></body></html>"
)
ANSWER_FIELDS = frozenset({"state", "code", "error"})


@dataclass(frozen=True, slots=True)
class Redirect:
    """The authorization response's query parameters (RFC 6749 sections 4.1.2, 4.1.2.1)."""

    params: dict[str, str] = field(repr=False)


class _Handler(BaseHTTPRequestHandler):
    server: _Listener
    timeout = 10.0

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        params = dict(parse_qsl(parts.query, keep_blank_values=True))
        if parts.path not in ("", "/") or not ANSWER_FIELDS & params.keys():
            self._answer(404, "Nothing here.")
            return
        expected = self.server.expected
        if not expected.matches(params.get("state", "")):
            self._answer(400, "This answer was not asked for here; nothing was done with it.")
            return
        expected.arrived = Redirect(params)
        self._answer(200, _page(params))

    def _answer(self, status: int, text: str) -> None:
        body = _PAGE.format(text=text).encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("Referrer-Policy", "no-referrer")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Silent: the request line carries the authorization code."""


def _page(params: dict[str, str]) -> str:
    if "code" in params:
        return "Access granted. You can close this window and go back to the terminal."
    return "Access was not granted. You can close this window."


@dataclass
class _Expected:
    """The `state` of the request sent (none yet: nothing is taken), and the answer."""

    state: str = field(default="", repr=False)
    arrived: Redirect | None = None

    def matches(self, state: str) -> bool:
        return bool(self.state) and hmac.compare_digest(
            state.encode("utf-8"), self.state.encode("utf-8")
        )


class _Listener(HTTPServer):
    def __init__(self, address: tuple[str, int], expected: _Expected) -> None:
        super().__init__(address, _Handler)
        self.expected = expected
        self.timeout = 0.0


class _Listener6(_Listener):
    address_family = socket.AF_INET6


# How many ports are tried for one free on both addresses before IPv4 alone is used.
PORT_ATTEMPTS = 20


def _listeners(expected: _Expected) -> list[_Listener]:
    """127.0.0.1 on a port the system picks, and [::1] on the same one. A machine without
    IPv6 on loopback has nothing for anybody else to take there either; a port another
    process holds on [::1] is given up for another."""
    for _ in range(PORT_ATTEMPTS):
        first = _Listener(("127.0.0.1", 0), expected)
        try:
            second = _Listener6(("::1", first.server_address[1]), expected)
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                first.server_close()
                continue
            return [first]
        return [first, second]
    return [_Listener(("127.0.0.1", 0), expected)]


class LoopbackListener:
    """A context manager listening from its creation: `port` names it in the redirect URI,
    `expect` tells it the `state` of the request sent (no answer is taken before), and
    `wait` returns the authorization response with that `state`, or None when `seconds`
    pass without one."""

    def __init__(self) -> None:
        self._expected = _Expected()
        self._servers = _listeners(self._expected)

    @property
    def port(self) -> int:
        return int(self._servers[0].server_address[1])

    def expect(self, state: str) -> None:
        self._expected.state = state

    def wait(self, seconds: float) -> Redirect | None:
        deadline = time.monotonic() + seconds
        with selectors.DefaultSelector() as selector:
            for server in self._servers:
                selector.register(server, selectors.EVENT_READ, server)
            while self._expected.arrived is None:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                for key, _ in selector.select(min(left, 1.0)):
                    key.data.handle_request()
        return self._expected.arrived

    def __enter__(self) -> LoopbackListener:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        for server in self._servers:
            server.server_close()
