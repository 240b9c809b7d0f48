"""What the test relays on loopback share: a listener on a free port in front of a server,
a thread accepting connections, the sockets opened kept so that `close` (or leaving the
`with` block) closes them all. Each relay decides in `_accepted` what becomes of a client."""

from __future__ import annotations

import contextlib
import socket
import threading
from types import TracebackType
from typing import Self


class LoopbackRelay:
    def __init__(self, host: str, port: int) -> None:
        self._target = (host, port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.host = "127.0.0.1"
        self.port = int(self._listener.getsockname()[1])
        self._lock = threading.Lock()
        self._open: list[socket.socket] = []

    def start(self) -> Self:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __enter__(self) -> Self:
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
                quietly_close(each)
            self._open.clear()

    def _keep(self, *sockets: socket.socket) -> None:
        with self._lock:
            self._open += sockets

    def _connect(self, client: socket.socket) -> socket.socket | None:
        """A connection to the server for `client`, kept; None (and `client` closed) when
        the server cannot be reached."""
        try:
            server = socket.create_connection(self._target)
        except OSError:
            client.close()
            return None
        self._keep(server)
        return server

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            self._keep(client)
            self._accepted(client)

    def _accepted(self, client: socket.socket) -> None:
        raise NotImplementedError


def quietly_close(each: socket.socket) -> None:
    """Shut `each` down (which wakes a thread reading it) and close it, whatever state it is
    in."""
    with contextlib.suppress(OSError):
        each.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        each.close()
