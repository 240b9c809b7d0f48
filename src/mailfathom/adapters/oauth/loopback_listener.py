"""The one-shot HTTP listener a browser is redirected back to (RFC 8252 section 7.3).

It listens on 127.0.0.1 and a port the system picks, for one authorization response: the
first request to its root carrying a `state`, a `code` or an `error`. Anything else (a
browser asking for an icon) is answered 404 and waited past. The request line and the query
are never written anywhere: they carry the authorization code. The page shown to the person
says only whether they can go back to the terminal.
"""

from __future__ import annotations

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
        self.server.arrived = Redirect(params)
        self._answer(200, self.server.page(params))

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


class _Listener(HTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.state = ""
        self.arrived: Redirect | None = None

    def page(self, params: dict[str, str]) -> str:
        if params.get("state") != self.state:
            return "This answer was not asked for here; nothing was done with it."
        if "code" in params:
            return "Access granted. You can close this window and go back to the terminal."
        return "Access was not granted. You can close this window."


class LoopbackListener:
    """A context manager listening from its creation: `port` names it in the redirect URI,
    `expect` tells it the `state` of the request sent (for the page it shows), and `wait`
    returns the first authorization response, or None when `seconds` pass without one."""

    def __init__(self) -> None:
        self._server = _Listener()

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def expect(self, state: str) -> None:
        self._server.state = state

    def wait(self, seconds: float) -> Redirect | None:
        deadline = time.monotonic() + seconds
        while self._server.arrived is None:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self._server.timeout = min(left, 1.0)
            self._server.handle_request()
        return self._server.arrived

    def __enter__(self) -> LoopbackListener:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._server.server_close()
