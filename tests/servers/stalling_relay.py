"""A relay on loopback in front of a server that passes on its first connections and then
stalls: every later connection is accepted and held open, and nothing is ever sent on it. A
client reading the server's greeting there waits until its own timeout, whatever else it was
told meanwhile (the way a server that stopped answering mid-pass holds a pass)."""

from __future__ import annotations

import contextlib
import socket
import threading
from types import TracebackType


class StallingRelay:
    def __init__(self, host: str, port: int, *, passed: int) -> None:
        """`passed`: how many connections are relayed to the server before it stalls."""
        self._target = (host, port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.host = "127.0.0.1"
        self.port = int(self._listener.getsockname()[1])
        self._passed = passed
        self._lock = threading.Lock()
        self._open: list[socket.socket] = []
        self.stalled = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def __enter__(self) -> StallingRelay:
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
                with contextlib.suppress(OSError):
                    each.close()
            self._open.clear()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                self._open.append(client)
                if self._passed <= 0:
                    self.stalled += 1
                    continue
                self._passed -= 1
            try:
                server = socket.create_connection(self._target)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._open.append(server)
            for source, sink in ((client, server), (server, client)):
                threading.Thread(target=_copy, args=(source, sink), daemon=True).start()


def _copy(source: socket.socket, sink: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while chunk := source.recv(65536):
            sink.sendall(chunk)
    with contextlib.suppress(OSError):
        sink.shutdown(socket.SHUT_WR)
