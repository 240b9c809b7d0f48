"""An IMAP account on the OAuth-validating Dovecot that also sends, through the OAuth test
submission server: its configuration, opened as services, and what it does with a send."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from log_audit import register_all
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.adapters.oauth.tokens import AccessTokens
from mailfathom.app.sending.send_email import SendRequest
from mailfathom.bootstrap import Services
from mailfathom.domain.access import ALL_PERMISSIONS, Caller
from mailfathom.domain.account_health import HealthState
from mailfathom.domain.oauth import SaslMechanism
from oauth.mail_accounts import (
    CountingEndpoint,
    counting_token_endpoint,
    grant,
    process_tokens_recorded,
    write_grant,
)
from sending.helpers import Clock
from servers.dovecot import DovecotServer, ImapAccount
from servers.oauth import OAuthServer
from servers.smtp import SmtpServer
from sync.helpers import RemoteMailbox

AGENT = Caller(permissions=ALL_PERMISSIONS, label="agent")
ACCOUNT = "mail"
RECIPIENT = "friend@example.net"
SUBJECT = "The minutes of Thursday's meeting"
BODY = "The minutes are below; corrections by Monday, please.\n"
# The test submission server's one password user.
SMTP_PASSWORD_USER = ("sender@example.test", "sender-password")


def sending_config(
    root: Path,
    account: ImapAccount,
    smtp: SmtpServer,
    *,
    client_id: str,
    refresh_file: Path,
    token_endpoint: str,
    mechanism: SaslMechanism = SaslMechanism.AUTO,
    smtp_auth: str = "oauth2",
    smtp_username: str | None = None,
) -> Path:
    """`smtp_auth` "oauth2" sends with the account's grant, logging in as `smtp_username`
    (the account's own by default); "password" with the submission server's password user,
    so only the IMAP connections use the grant."""
    if smtp_auth == "oauth2":
        smtp_login = f'Auth = "oauth2"\nUsername = "{smtp_username or account.username}"'
    else:
        env = f"MF_SMTP_SECRET_{uuid.uuid4().hex[:8].upper()}"
        os.environ[env] = SMTP_PASSWORD_USER[1]
        smtp_login = f'Username = "{SMTP_PASSWORD_USER[0]}"\nSecret = {{ Env = "{env}" }}'
    text = f"""
[Store]
DataDir = "{root / "data"}"

[MailDelivery]
RetryBaseSeconds = 30

[[Accounts]]
Id = "{ACCOUNT}"
DisplayName = "Mail"
Kind = "imap"

[Accounts.Imap]
Host = "{account.host}"
Port = {account.port}
Username = "{account.username}"
Tls = "none"
TimeoutSeconds = 30
Auth = "oauth2"

[Accounts.OAuth]
Provider = "generic"
ClientId = "{client_id}"
RefreshToken = {{ File = "{refresh_file}" }}
TokenEndpoint = "{token_endpoint}"
Scopes = ["mail"]
Mechanism = "{mechanism.value}"

[[Accounts.Folders]]
Remote = "INBOX"
Role = "Inbox"

[[Accounts.Folders]]
Remote = "Sent"
Role = "Sent"

[[Accounts.Folders]]
Remote = "Drafts"
Role = "Drafts"

[Accounts.Delivery]
Enabled = true
Address = "{account.username}@example.test"

[Accounts.Delivery.Smtp]
Host = "{smtp.host}"
Port = {smtp.port}
Tls = "starttls"
{smtp_login}
"""
    path = root / "mailfathom.toml"
    path.write_text(text, "utf-8")
    return path


@dataclass
class Sender:
    """The deployment of one account that sends, its grant, and what reaches its provider
    and its servers."""

    services: Services
    clock: Clock
    oauth: OAuthServer
    account: ImapAccount
    smtp: SmtpServer
    client_id: str
    refresh_file: Path
    endpoint: CountingEndpoint
    tokens: AccessTokens

    def deliver(self) -> None:
        self.services.delivery_pass(tls_context=self.smtp.client_context).run_once()

    def grant_again(self) -> None:
        write_grant(self.oauth, self.client_id, self.account, self.refresh_file)


@contextmanager
def oauth_sender(
    root: Path,
    oauth: OAuthServer,
    dovecot: DovecotServer,
    account: ImapAccount,
    smtp: SmtpServer,
    *,
    token_clock: Callable[[], float] | None = None,
    **options: Any,
) -> Iterator[Sender]:
    """The account granted, configured (`options` as `sending_config` takes them) and
    opened, with its Sent and Drafts folders made on the server; the process's tokens read
    `token_clock`, and the provider is asked through a counting endpoint."""
    register_all([SUBJECT, BODY, RECIPIENT, f"{account.username}@example.test"])
    client_id, refresh_file = grant(oauth, account, root)
    for folder in ("Sent", "Drafts"):
        dovecot.create_folder(account.username, folder)
    clock = Clock(datetime(2026, 7, 1, 9, tzinfo=UTC))
    with (
        counting_token_endpoint(oauth.token_endpoint) as endpoint,
        process_tokens_recorded(token_clock) as tokens,
    ):
        config = sending_config(
            root,
            account,
            smtp,
            client_id=client_id,
            refresh_file=refresh_file,
            token_endpoint=endpoint.url,
            **options,
        )
        with Services.open(load_config(config), clock=clock) as services:
            yield Sender(
                services, clock, oauth, account, smtp, client_id, refresh_file, endpoint, tokens
            )


def send(services: Services, key: str) -> str:
    """Queue one message to `RECIPIENT`; answers its outgoing id."""
    record = services.sending().send.send(
        AGENT,
        SendRequest(
            account=ACCOUNT,
            to=[RECIPIENT],
            subject=SUBJECT,
            plain_text_body=BODY,
            idempotency_key=key,
        ),
    )
    return str(record.outgoing_id)


def held_for_consent(services: Services) -> list[tuple[str, HealthState, int]]:
    return [(h.account_id, h.state, h.code) for h in services.account_health()]


def folder_messages(account: ImapAccount, folder: str) -> list[bytes]:
    """What an independent IMAP client finds in the account's `folder`."""
    remote = RemoteMailbox(account)
    try:
        return remote.messages(folder)
    finally:
        remote.close()
