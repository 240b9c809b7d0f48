"""A relay on loopback between an IMAP client and the test Dovecot that can lose the answer to
an APPEND: while armed, it forwards the command and its message to the server, and when the
server's tagged answer comes back (the message is stored by then), it closes both connections
instead of passing the answer on. The client sees a connection lost after it sent the
message, not knowing whether the server took it."""

from __future__ import annotations

import re
import socket
import threading

from servers.loopback_relay import LoopbackRelay, quietly_close

_APPEND = re.compile(rb"(?:^|\r\n)([A-Za-z0-9]+) APPEND ", re.IGNORECASE)


class AnswerCuttingProxy(LoopbackRelay):
    def __init__(self, host: str, port: int) -> None:
        super().__init__(host, port)
        self.armed = threading.Event()
        self.cuts = 0
        self.start()

    def _accepted(self, client: socket.socket) -> None:
        server = self._connect(client)
        if server is None:
            return
        session = _Session(self, client, server)
        threading.Thread(target=session.upstream, daemon=True).start()
        threading.Thread(target=session.downstream, daemon=True).start()

    def _cut(self, client: socket.socket, server: socket.socket) -> None:
        with self._lock:
            self.cuts += 1
        for each in (client, server):
            quietly_close(each)


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
            quietly_close(self._server)

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
            quietly_close(self._client)
