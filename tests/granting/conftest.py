"""A client registered with the session's authorization server, for each test."""

from __future__ import annotations

import uuid

import pytest

from servers.oauth import OAuthServer


@pytest.fixture
def client_id(oauth_server: OAuthServer) -> str:
    """A public client, as an operator registers for MailFathom: the device grant and the
    loopback redirect on any port of 127.0.0.1 (RFC 8252 section 7.3)."""
    name = f"mailfathom-{uuid.uuid4().hex[:8]}"
    oauth_server.add_client(name, redirect_uris=["http://127.0.0.1"])
    return name
