"""The test load balancer (`servers.nginx`): requests alternate between the upstreams with
no affinity, a streamed answer passes unbuffered, and the balancer leaves nothing behind."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator

import httpx2
import pytest

from servers._common import pid_alive
from servers.nginx import RoundRobinBalancer

RELEASE = threading.Event()


class _Named(http.server.BaseHTTPRequestHandler):
    """Names its port; on `/held`, then waits for the test to read that before ending."""

    def do_GET(self) -> None:
        address = self.server.server_address
        assert isinstance(address, tuple)
        name = str(address[1]).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        self.wfile.write(b"data: " + name + b"\n\n")
        self.wfile.flush()
        if self.path == "/held":
            released = RELEASE.wait(10)
            self.wfile.write(b"data: released\n\n" if released else b"data: unread\n\n")

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture
def upstreams() -> Iterator[list[int]]:
    servers = [http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Named) for _ in range(2)]
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    yield [s.server_address[1] for s in servers]
    for server in servers:
        server.shutdown()
        server.server_close()


def test_requests_alternate_and_streams_pass_unbuffered(upstreams: list[int]) -> None:
    balancer = RoundRobinBalancer(upstreams).start()
    root = balancer.root
    try:
        with httpx2.Client(timeout=10) as http:
            url = f"http://127.0.0.1:{balancer.port}"
            answered = [http.get(url + "/").text for _ in range(4)]
            with http.stream("GET", url + "/held") as streamed:
                lines = streamed.iter_lines()
                first = next(lines)
                RELEASE.set()
                rest = [line for line in lines if line]
        assert answered[0] != answered[1]
        assert answered == answered[:2] * 2
        assert first.startswith("data: ")
        assert rest == ["data: released"]
        assert [port for port, _, _ in balancer.served()][:4] == [
            int(a.removeprefix("data: ").strip()) for a in answered
        ]
        pid = int((root / "nginx.pid").read_text())
    finally:
        balancer.stop()
    assert not pid_alive(pid)
    assert not root.exists()
