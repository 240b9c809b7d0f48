"""Withdrawing a refresh token the deployment will not keep (RFC 7009).

`init` and `mfctl account consent` obtain a grant before they know they will keep it: the
servers are checked with it first, and the person may interrupt, or have signed in as
somebody else. A grant thrown away is withdrawn at the provider, so no working token is left
anywhere but in the deployment's files. The provider may end the whole authorization the
token belongs to (Google does): that is the point for a grant nobody keeps, and the reason
`consent` withdraws only a grant the server showed to be somebody else's, since one of the
account's own user shares the authorization of the token the account runs on.

Withdrawing is a courtesy on the way out of a failed command, so it raises nothing but an
interrupt (which the caller meets once what it keeps locally is already removed): it answers
whether the provider confirmed it, and the caller says so. The token, the client's secret and
the answer are never logged or repeated.
"""

from __future__ import annotations

import ssl

import httpx2

from mailfathom.adapters.oauth.flows import OAuthClient

# A failed command waits this long at most for the provider before it ends anyway.
REVOCATION_TIMEOUT_SECONDS = 10.0


def revoke_refresh_token(endpoint: str | None, client: OAuthClient, refresh_token: str) -> bool:
    """Ask `endpoint` to withdraw `refresh_token`; True when it answered 200 (RFC 7009
    section 2.2: also for a token it no longer knew). False without an endpoint, or when the
    provider refused or could not be reached."""
    if endpoint is None:
        return False
    form = {
        "token": refresh_token,
        "token_type_hint": "refresh_token",
        "client_id": client.client_id,
    }
    if client.client_secret is not None:
        form["client_secret"] = client.client_secret
    try:
        with httpx2.Client(
            timeout=REVOCATION_TIMEOUT_SECONDS,
            verify=ssl.create_default_context(),
            follow_redirects=False,
        ) as http:
            answer = http.post(endpoint, data=form, headers={"Accept": "application/json"})
    except Exception:
        # Not only HTTPError: an endpoint httpx2 cannot parse raises InvalidURL, which is none.
        return False
    return answer.status_code == 200
