"""A relay on loopback between an IMAP client and the test Dovecot that can lose the answer to
an APPEND: while armed, it forwards the command and its message to the server, and when the
server's tagged answer comes back (the message is stored by then), it closes both connections
instead of passing the answer on. The client sees a connection lost after it sent the
message, not knowing whether the server took it."""

from __future__ import annotations

import contextlib
import re
import socket
import threading
from types import TracebackType

_APPEND = re.compile(rb"(?:^|\r\n)([A-Za-z0-9]+) APPEND ", re.IGNORECASE)


class AnswerCuttingProxy:
    def __init__(self, host: str, port: int) -> None:
        self._target = (host, port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.host = "127.0.0.1"
        self.port = int(self._listener.getsockname()[1])
        self.armed = threading.Event()
        self._lock = threading.Lock()
        self.cuts = 0
        self._open: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def __enter__(self) -> AnswerCuttingProxy:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        self._listener.close()
        with self._lock:
            for each in self._open:
                _quietly_close(each)
            self._open.clear()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self._target)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._open += [client, server]
            session = _Session(self, client, server)
            threading.Thread(target=session.upstream, daemon=True).start()
            threading.Thread(target=session.downstream, daemon=True).start()

    def _cut(self, client: socket.socket, server: socket.socket) -> None:
        with self._lock:
            self.cuts += 1
        for each in (client, server):
            _quietly_close(each)


class _Session:
    def __init__(self, proxy: AnswerCuttingProxy, client: socket.socket, server: socket.socket):
        self._proxy = proxy
        self._client = client
        self._server = server
        self._append_tags: list[bytes] = []
        self._seen = b""

    def upstream(self) -> None:
        """Client to server, noting the tag of every APPEND the client sends."""
        try:
            while data := self._client.recv(65536):
                self._seen = (self._seen + data)[-4096:]
                self._append_tags += [m.group(1) for m in _APPEND.finditer(self._seen)]
                self._seen = self._seen[-64:]
                self._server.sendall(data)
        except OSError:
            pass
        finally:
            _quietly_close(self._server)

    def downstream(self) -> None:
        """Server to client, line by line, holding back a tagged answer to an APPEND while
        the proxy is armed: the connection is cut there instead."""
        pending = b""
        try:
            while data := self._server.recv(65536):
                pending += data
                *lines, pending = pending.split(b"\r\n")
                for line in lines:
                    tag = line.split(b" ", 1)[0]
                    if self._proxy.armed.is_set() and tag in self._append_tags:
                        self._proxy._cut(self._client, self._server)
                        return
                    self._client.sendall(line + b"\r\n")
        except OSError:
            pass
        finally:
            _quietly_close(self._client)


def _quietly_close(each: socket.socket) -> None:
    with contextlib.suppress(OSError):
        each.shutdown(socket.SHUT_RDWR)
    each.close()
