"""A relay on loopback in front of a server that passes on its first connections and then
stalls: every later connection is accepted and held open, and nothing is ever sent on it. A
client reading the server's greeting there waits until its own timeout, whatever else it was
told meanwhile (the way a server that stopped answering mid-pass holds a pass)."""

from __future__ import annotations

import contextlib
import socket
import threading

from servers.loopback_relay import LoopbackRelay


class StallingRelay(LoopbackRelay):
    def __init__(self, host: str, port: int, *, passed: int) -> None:
        """`passed`: how many connections are relayed to the server before it stalls."""
        super().__init__(host, port)
        self._passed = passed
        self.stalled = 0
        self.start()

    def _accepted(self, client: socket.socket) -> None:
        with self._lock:
            if self._passed <= 0:
                self.stalled += 1
                return
            self._passed -= 1
        server = self._connect(client)
        if server is None:
            return
        for source, sink in ((client, server), (server, client)):
            threading.Thread(target=_copy, args=(source, sink), daemon=True).start()


def _copy(source: socket.socket, sink: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while chunk := source.recv(65536):
            sink.sendall(chunk)
    with contextlib.suppress(OSError):
        sink.shutdown(socket.SHUT_WR)
