"""Withdrawing a grant nobody keeps is a courtesy on the way out of a failed command: it
answers whether the provider confirmed it and never raises, whatever the endpoint is."""

from __future__ import annotations

from mailfathom.adapters.oauth.flows import OAuthClient
from mailfathom.adapters.oauth.revocation import revoke_refresh_token


def test_an_endpoint_that_is_no_url_is_answered_false() -> None:
    # httpx2 refuses this address with InvalidURL, which is no HTTPError.
    client = OAuthClient("mailfathom", ("mail.imap",), None)
    assert revoke_refresh_token("http://[::1/revoke", client, "refresh-token") is False
