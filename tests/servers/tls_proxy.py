"""A reverse proxy on loopback that terminates TLS, as an operator puts in front of the
console: HTTPS outward (a certificate for `localhost` from a CA of the test's own), plain
HTTP to the listener behind it, one upstream connection per client connection.

Like the usual proxies it adds `X-Forwarded-For`, `X-Forwarded-Proto`, `X-Forwarded-Host`
and `Forwarded` to every request, naming an address that is not the loopback peer the
listener sees, so a test shows the listener believes none of them. `host` says what `Host`
the listener is sent: the browser's own (`"public"`), or the listener's address, as nginx
sends by default (`"upstream"`)."""

from __future__ import annotations

import asyncio
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal

import h11
import trustme

HOP_BY_HOP = {b"connection", b"keep-alive", b"transfer-encoding", b"upgrade", b"te"}
FORWARDED_FOR = "203.0.113.50"


@dataclass
class TlsProxy:
    port: int
    ca: trustme.CA
    seen_hosts: list[str] = field(default_factory=list)

    @property
    def origin(self) -> str:
        return f"https://localhost:{self.port}"


@contextmanager
def tls_proxy(
    upstream_port: int, host: Literal["public", "upstream"], port: int = 0
) -> Iterator[TlsProxy]:
    """The proxy on `port` of 127.0.0.1 (one the system picks for 0), in a thread of its
    own, until the block ends."""
    ca = trustme.CA()
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("localhost", "127.0.0.1").configure_cert(context)
    loop = asyncio.new_event_loop()
    started = threading.Event()
    holder: dict[str, asyncio.Server] = {}
    proxy = TlsProxy(0, ca)

    async def serve_client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await _relay(reader, writer, upstream_port, host, proxy)
        except (OSError, h11.ProtocolError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    async def start() -> None:
        server = await asyncio.start_server(serve_client, "127.0.0.1", port, ssl=context)
        holder["server"] = server
        proxy.port = int(server.sockets[0].getsockname()[1])
        started.set()

    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(start(), loop).result(timeout=30)
    started.wait(30)
    try:
        yield proxy
    finally:

        async def stop() -> None:
            holder["server"].close()
            await holder["server"].wait_closed()

        asyncio.run_coroutine_threadsafe(stop(), loop).result(timeout=30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=30)
        loop.close()


async def _events(connection: h11.Connection, reader: asyncio.StreamReader) -> h11.Event:
    """The next event of `connection`, reading as needed (`ConnectionClosed` at the end). A
    request pipelined before the answer to the one before it ends the connection."""
    while True:
        event = connection.next_event()
        if isinstance(event, h11.Event):
            return event
        if event is h11.PAUSED:
            raise ConnectionError("a pipelined request")
        connection.receive_data(await reader.read(65536))


async def _relay(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    upstream_port: int,
    host: Literal["public", "upstream"],
    proxy: TlsProxy,
) -> None:
    up_reader, up_writer = await asyncio.open_connection("127.0.0.1", upstream_port)
    client, upstream = h11.Connection(h11.SERVER), h11.Connection(h11.CLIENT)
    try:
        while True:
            request = await _events(client, reader)
            if not isinstance(request, h11.Request):
                return
            body = b""
            while not isinstance(event := await _events(client, reader), h11.EndOfMessage):
                if isinstance(event, h11.Data):
                    body += event.data
            headers = _forwarded(request, body, upstream_port, host, proxy)
            up_writer.write(
                upstream.send(
                    h11.Request(method=request.method, target=request.target, headers=headers)
                )
                or b""
            )
            up_writer.write(upstream.send(h11.Data(data=body)) or b"")
            up_writer.write(upstream.send(h11.EndOfMessage()) or b"")
            await up_writer.drain()
            await _answer(upstream, up_reader, client, writer)
            if client.our_state is not h11.DONE or upstream.our_state is not h11.DONE:
                return
            client.start_next_cycle()
            upstream.start_next_cycle()
    finally:
        up_writer.close()


def _forwarded(
    request: h11.Request,
    body: bytes,
    upstream_port: int,
    host: Literal["public", "upstream"],
    proxy: TlsProxy,
) -> list[tuple[bytes, bytes]]:
    public_host = b""
    headers: list[tuple[bytes, bytes]] = []
    for name, value in request.headers:
        if name == b"host":
            public_host = value
        elif name not in HOP_BY_HOP and name != b"content-length":
            headers.append((name, value))
    proxy.seen_hosts.append(public_host.decode("latin-1"))
    sent_host = public_host if host == "public" else f"127.0.0.1:{upstream_port}".encode()
    return [
        (b"host", sent_host),
        *headers,
        (b"content-length", str(len(body)).encode()),
        (b"x-forwarded-for", FORWARDED_FOR.encode()),
        (b"x-forwarded-proto", b"https"),
        (b"x-forwarded-host", public_host),
        (b"forwarded", f"for={FORWARDED_FOR};proto=https".encode()),
    ]


async def _answer(
    upstream: h11.Connection,
    up_reader: asyncio.StreamReader,
    client: h11.Connection,
    writer: asyncio.StreamWriter,
) -> None:
    response = await _events(upstream, up_reader)
    assert isinstance(response, h11.Response)
    kept = [(n, v) for n, v in response.headers if n not in HOP_BY_HOP]
    framed = any(n == b"content-length" for n, _ in kept)
    headers = kept if framed else [*kept, (b"transfer-encoding", b"chunked")]
    writer.write(
        client.send(h11.Response(status_code=response.status_code, headers=headers)) or b""
    )
    while not isinstance(event := await _events(upstream, up_reader), h11.EndOfMessage):
        if isinstance(event, h11.Data):
            writer.write(client.send(h11.Data(data=event.data)) or b"")
            await writer.drain()
    writer.write(client.send(h11.EndOfMessage()) or b"")
    await writer.drain()
