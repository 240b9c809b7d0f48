"""A DNS server on loopback for tests: `dnslib` serving TXT records a test publishes.

It listens on 127.0.0.1, UDP and TCP on one port, in threads of the test process. An answer
longer than 512 octets is truncated over UDP (RFC 1035 section 4.2.1), so a client that wants
a 2048-bit key has to ask again over TCP, as it would on the Internet. Every question is
counted by name, so a test can prove a cache saved one; `silent` makes the server read
questions and never answer, which is how a test proves a deadline holds; `failing` names
answer SERVFAIL.
"""

from __future__ import annotations

import threading
from collections import Counter

from dnslib import QTYPE, RCODE, RR, TXT, DNSError, DNSLabel, DNSRecord
from dnslib.server import DNSHandler, DNSLogger, DNSServer

from servers._common import LOOPBACK, ServerStartError, free_port

_TXT_STRING = 255
_UDP_PAYLOAD = 512
POLL_SECONDS = 0.05
"""How often a serving thread looks for a request to stop; `stop` waits up to this long per
transport (socketserver's own default, half a second, made every test's teardown a second)."""


class _Handler(DNSHandler):  # type: ignore[misc]
    """dnslib's handler, truncating a long UDP answer to its header and question with the TC
    bit set (dnslib's own truncation drops the question, which clients reject)."""

    def get_reply(self, data: bytes) -> bytes:
        packed: bytes = super().get_reply(data)
        if self.protocol != "udp" or len(packed) <= _UDP_PAYLOAD:
            return packed
        truncated = DNSRecord.parse(data).reply()
        truncated.header.tc = 1
        result: bytes = truncated.pack()
        return result


class _Silence(DNSError):  # type: ignore[misc]
    """Raised to make dnslib's handler drop a question without answering it."""


class _Zone:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.records: dict[str, tuple[str, int]] = {}
        self.failing: set[str] = set()
        self.silent = False
        self.questions: Counter[str] = Counter()

    def resolve(self, request: DNSRecord, handler: DNSHandler) -> DNSRecord:
        del handler
        name = str(request.q.qname).rstrip(".").lower()
        with self.lock:
            self.questions[name] += 1
            if self.silent:
                raise _Silence("silent")
            failing = name in self.failing
            record = self.records.get(name)
        reply = request.reply()
        if failing:
            reply.header.rcode = RCODE.SERVFAIL
        elif record is None:
            reply.header.rcode = RCODE.NXDOMAIN
        elif request.q.qtype == QTYPE.TXT:
            text, ttl = record
            data = text.encode("utf-8")
            chunks = [data[i : i + _TXT_STRING] for i in range(0, len(data), _TXT_STRING)]
            reply.add_answer(RR(DNSLabel(name), QTYPE.TXT, ttl=ttl, rdata=TXT(chunks or [b""])))
        return reply


class DnsServer:
    host = LOOPBACK

    def __init__(self) -> None:
        self.port = 0
        self._zone = _Zone()
        self._servers: list[DNSServer] = []

    @property
    def address(self) -> tuple[str, int]:
        return self.host, self.port

    def start(self, attempts: int = 10) -> DnsServer:
        quiet = DNSLogger("-request,-reply,-truncated,-error,-recv,-send,-data", logf=_discard)
        last: OSError | None = None
        for _ in range(attempts):
            port = free_port()
            try:
                udp = DNSServer(
                    self._zone, address=self.host, port=port, handler=_Handler, logger=quiet
                )
            except OSError as error:
                last = error
                continue
            try:
                tcp = DNSServer(
                    self._zone,
                    address=self.host,
                    port=port,
                    tcp=True,
                    handler=_Handler,
                    logger=quiet,
                )
            except OSError as error:
                udp.server.server_close()
                last = error
                continue
            self.port = port
            self._servers = [udp, tcp]
            for server in self._servers:
                threading.Thread(
                    target=server.server.serve_forever,
                    kwargs={"poll_interval": POLL_SECONDS},
                    daemon=True,
                ).start()
            return self
        raise ServerStartError(f"no free port for the DNS server: {last}")

    def stop(self) -> None:
        for server in self._servers:
            server.stop()
            server.server.server_close()
        self._servers = []

    def publish(self, name: str, text: str, *, ttl: int = 300) -> None:
        with self._zone.lock:
            self._zone.records[name.rstrip(".").lower()] = (text, ttl)

    def withdraw(self, name: str) -> None:
        with self._zone.lock:
            self._zone.records.pop(name.rstrip(".").lower(), None)

    def fail(self, name: str) -> None:
        with self._zone.lock:
            self._zone.failing.add(name.rstrip(".").lower())

    def set_silent(self, silent: bool) -> None:
        with self._zone.lock:
            self._zone.silent = silent

    def questions(self, name: str | None = None) -> int:
        """How many questions arrived, over UDP and TCP, for `name` or for any name."""
        with self._zone.lock:
            if name is None:
                return sum(self._zone.questions.values())
            return self._zone.questions[name.rstrip(".").lower()]


def _discard(_: str) -> None:
    return None
