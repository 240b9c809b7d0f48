"""Fixtures of the sender-verification tests: a DNS server on loopback, and engines asking it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from servers.dns import DnsServer


@pytest.fixture
def dns_server() -> Iterator[DnsServer]:
    """A DNS server on 127.0.0.1 publishing nothing until the test publishes records."""
    server = DnsServer().start()
    try:
        yield server
    finally:
        server.stop()
