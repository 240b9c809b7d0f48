"""Sending from an account whose grant the provider refused: its mail stays queued without
using up attempts or asking the provider again, and the other accounts' mail goes out."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from log_audit import register_all
from mailfathom.app.sending.send_email import SendRequest
from mailfathom.domain.outgoing import Stage
from oauth.mail_accounts import counting_token_endpoint, process_tokens_recorded
from sending.helpers import AGENT, SMTP_PASSWORD, SMTP_USER, SendingDeployment
from sending.helpers import open_deployment as _open
from servers.oauth import OAuthServer, device_grant
from servers.smtp import SmtpServer

SUBJECT = "Quarterly figures for the board"


def _oauth_sender(smtp: SmtpServer, token_endpoint: str, client_id: str, refresh: Path) -> str:
    return f"""
[[Accounts]]
Id = "side"
Kind = "local"

[[Accounts.Folders]]
Remote = "INBOX"
Role = "Inbox"

[Accounts.Delivery]
Enabled = true
Address = "side@example.org"

[Accounts.Delivery.Smtp]
Host = "127.0.0.1"
Port = {smtp.port}
Tls = "starttls"
Auth = "oauth2"
Username = "{SMTP_USER}"

[Accounts.OAuth]
Provider = "generic"
ClientId = "{client_id}"
RefreshToken = {{ File = "{refresh}" }}
TokenEndpoint = "{token_endpoint}"
Scopes = ["mail"]
"""


@pytest.fixture(scope="module")
def smtp() -> Iterator[SmtpServer]:
    server = SmtpServer({SMTP_USER: SMTP_PASSWORD}).start()
    yield server
    server.close()


def _send(d: SendingDeployment, account: str, to: str, key: str) -> str:
    record = d.services.sending().send.send(
        AGENT,
        SendRequest(
            account=account,
            to=[to],
            subject=SUBJECT,
            plain_text_body="The figures are attached below.\n",
            idempotency_key=key,
        ),
    )
    return str(record.outgoing_id)


def test_a_refused_grant_keeps_its_accounts_mail_queued_and_asks_the_provider_once(
    tmp_path: Path,
    smtp: SmtpServer,
    oauth_server: OAuthServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    smtp.clear()
    register_all([SUBJECT, "side@example.org", "ann@example.net", "bob@example.net"])
    client_id = "sender-client"
    oauth_server.add_client(client_id, scope="mail")
    granted = device_grant(oauth_server, client_id=client_id, subject="side-sender", scope="mail")
    register_all([granted["access_token"], granted["refresh_token"]])
    refresh = tmp_path / "side.refresh"
    refresh.write_text(granted["refresh_token"])
    refresh.chmod(0o600)
    oauth_server.revoke_refresh_tokens("side-sender")
    with (
        counting_token_endpoint(oauth_server.token_endpoint) as endpoint,
        process_tokens_recorded(),
    ):
        extra = _oauth_sender(smtp, endpoint.url, client_id, refresh)
        for d in _open(tmp_path, smtp, monkeypatch, extra_accounts=extra):
            side = _send(d, "side", "ann@example.net", "side-1")
            work = _send(d, "work", "bob@example.net", "work-1")
            assert smtp.client_context is not None
            for _ in range(3):
                d.services.delivery_pass(tls_context=smtp.client_context).run_once()
                d.clock.advance(60)
            outgoing = d.services.sending().outgoing
            waiting = outgoing.read(AGENT, side)
            assert (waiting.stage, waiting.failure_code) == (Stage.QUEUED, 71009)
            assert waiting.attempt_count == 0
            assert outgoing.read(AGENT, work).stage is Stage.SENT
            assert endpoint.requests == 1
            (received,) = smtp.received()
            assert received.rcpt_tos == ["bob@example.net"]
