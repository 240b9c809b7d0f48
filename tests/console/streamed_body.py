"""A client streaming a large request body over a raw socket, as a hostile one would: it
sends chunk after chunk until the server answers or stops taking them, and says how far it
got and what came back."""

from __future__ import annotations

import select
import socket
from dataclasses import dataclass

CHUNK = 64 * 1024


@dataclass(frozen=True)
class Streamed:
    sent: int
    answer: bytes

    @property
    def status(self) -> int | None:
        """The status line's code, or None when nothing came back (the server cut the
        connection before its answer could be read)."""
        line = self.answer.split(b"\r\n", 1)[0].split(b" ")
        return int(line[1]) if len(line) > 1 and line[1].isdigit() else None


def stream_body(
    port: int,
    path: str,
    total: int,
    headers: dict[str, str],
    *,
    chunked: bool = True,
    content_type: str = "application/x-www-form-urlencoded",
) -> Streamed:
    """POST `total` octets of a body (URL-encoded unless `content_type` says otherwise) to
    127.0.0.1:`port` at `path`: chunked, or declared by `Content-Length` (then nothing is
    sent before the server answers or asks for it)."""
    lines = [f"POST {path} HTTP/1.1", f"Host: 127.0.0.1:{port}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    lines.append(f"Content-Type: {content_type}")
    lines.append("Transfer-Encoding: chunked" if chunked else f"Content-Length: {total}")
    head = ("\r\n".join(lines) + "\r\n\r\n").encode()
    chunk = f"{CHUNK:x}\r\n".encode() + b"a" * CHUNK + b"\r\n"
    sent = 0
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        sock.sendall(head)
        try:
            while sent < total and not _answered(sock, wait=0 if chunked else 10):
                if not chunked:
                    break
                sock.sendall(chunk)
                sent += CHUNK
            if chunked and sent >= total:
                sock.sendall(b"0\r\n\r\n")
        except OSError:
            pass
        return Streamed(sent, _read(sock))


def _answered(sock: socket.socket, wait: float) -> bool:
    readable, _, _ = select.select([sock], [], [], wait)
    return bool(readable)


def _read(sock: socket.socket) -> bytes:
    answer = b""
    try:
        while b"\r\n\r\n" not in answer:
            more = sock.recv(65536)
            if not more:
                break
            answer += more
    except OSError:
        pass
    return answer
