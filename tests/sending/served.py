"""Deployments that send, served by `mailfathom serve` and reached with the official client.

`relaxed`: sends wait an hour before the delivery pass may take them (so they can be
inspected and withdrawn), tight bounds on recipients and body, a denied domain, accounts that
cannot send for each reason. `strict`: sends leave at once through the test SMTP server
(STARTTLS and AUTH), unvouched addresses are refused and each client may queue two sends an
hour.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from email.message import EmailMessage
from pathlib import Path

from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.bootstrap import Services
from mcp_tests.deployment import _free_port, _wait_for_port
from servers.smtp import SmtpServer

from .helpers import SMTP_PASSWORD, SMTP_USER

KEYS = {
    "agent": "key-agent-" + uuid.uuid4().hex,
    "sendonly": "key-sendonly-" + uuid.uuid4().hex,
    "reader": "key-reader-" + uuid.uuid4().hex,
}


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


@dataclass(frozen=True)
class Served:
    url: str
    config_path: Path
    env: dict[str, str]
    data_dir: Path


def _callers() -> str:
    return f"""
[McpEndpoint]
Enabled = true
Listen = "127.0.0.1:8625"

[[McpEndpoint.Callers]]
Name = "agent"
Credential = "apiKey"
ApiKeySha256 = "{_digest(KEYS["agent"])}"

[[McpEndpoint.Callers]]
Name = "sendonly"
Credential = "apiKey"
ApiKeySha256 = "{_digest(KEYS["sendonly"])}"
Permissions = ["mailfathom.mail.send"]

[[McpEndpoint.Callers]]
Name = "reader"
Credential = "apiKey"
ApiKeySha256 = "{_digest(KEYS["reader"])}"
Permissions = ["mailfathom.mail.read"]
"""


def _local_account(account_id: str, address: str, delivery: str) -> str:
    return f"""
[[Accounts]]
Id = "{account_id}"
DisplayName = "{account_id.title()} account"
Kind = "local"
Addresses = ["{address}"]

[[Accounts.Folders]]
Remote = "INBOX"
Role = "Inbox"

[[Accounts.Folders]]
Remote = "Sent"
Role = "Sent"
{delivery}
"""


def _smtp_block(smtp: SmtpServer) -> str:
    return f"""
[Accounts.Delivery.Smtp]
Host = "127.0.0.1"
Port = {smtp.port}
Tls = "starttls"
Username = "{SMTP_USER}"
Secret = {{ Env = "MAILFATHOM_TEST_SMTP_SECRET" }}
"""


def relaxed_config(root: Path, smtp: SmtpServer) -> str:
    work = _local_account(
        "work",
        "me@example.org",
        '[Accounts.Delivery]\nEnabled = true\nAddress = "me@example.org"\n' + _smtp_block(smtp),
    )
    quiet = _local_account(
        "quiet", "quiet@example.org", '[Accounts.Delivery]\nAddress = "quiet@example.org"\n'
    )
    bare = _local_account("bare", "bare@example.org", "")
    return f"""
[Store]
DataDir = "{root / "data"}"

[MailDelivery]
HoldSeconds = 3600
MaxRecipientCount = 3
MaxBodyCharacters = 2000

[MailDelivery.RecipientPolicy]
Deny = ["blocked.example"]
{work}{quiet}{bare}{_callers()}"""


def strict_config(root: Path, smtp: SmtpServer) -> str:
    work = _local_account(
        "work",
        "me@example.org",
        '[Accounts.Delivery]\nEnabled = true\nAddress = "me@example.org"\n' + _smtp_block(smtp),
    )
    # An account of this deployment reached over IMAP (never synchronized here): its address
    # is one the deployment holds a record of, and it is not a peer mailbox.
    colleague = """
[[Accounts]]
Id = "colleague"
Kind = "imap"
Addresses = ["colleague@example.net"]

[Accounts.Imap]
Host = "127.0.0.1"
Port = 1
Username = "colleague"
Tls = "none"
Secret = { Env = "MAILFATHOM_TEST_SMTP_SECRET" }

[[Accounts.Folders]]
Remote = "INBOX"
Role = "Inbox"
"""
    return f"""
[Store]
DataDir = "{root / "data"}"

[Sync]
Enabled = false

[MailDelivery]
UnvouchedRecipients = "Refuse"

[MailDelivery.SendCeilings]
Client = {{ PerHour = 3 }}
{work}{colleague}{_callers()}"""


def incoming(subject: str, to: str) -> bytes:
    m = EmailMessage()
    m["From"] = "Olga Writer <olga@example.net>"
    m["To"] = to
    m["Subject"] = subject
    m["Message-ID"] = f"<{uuid.uuid4().hex}@example.net>"
    m.set_content("A message to answer.\n")
    return bytes(m)


def serve(
    root: Path,
    text: str,
    smtp: SmtpServer | None,
    *,
    deliver: bool,
    mail: dict[str, bytes] | None = None,
    port: int | None = None,
) -> Iterator[Served]:
    """`mail`: a message to store in each named local account's inbox before serving.
    `smtp` None serves a deployment that reaches no submission server. `port`: the one the
    endpoint listens on, for a configuration that names its own address (a free one when
    None)."""
    root.mkdir(parents=True, exist_ok=True)
    config_path = root / "mailfathom.toml"
    config_path.write_text(text, "utf-8")
    if mail:
        config = load_config(config_path)
        with Services.open(config) as services:
            for account_id, raw in mail.items():
                services.connectors.local.folder(account_id, "INBOX").deliver(raw)
                account = config.account(account_id)
                assert account is not None
                services.account_synchronizer().run_once(account)
    env = dict(os.environ)
    if smtp is not None:
        env |= {"MAILFATHOM_TEST_SMTP_SECRET": SMTP_PASSWORD, "SSL_CERT_FILE": str(smtp.ca_path)}
    port = port or _free_port()
    argv = [sys.executable, "-m", "mailfathom", "serve", "--config", str(config_path)]
    argv += ["--port", str(port), "--deliver" if deliver else "--no-deliver"]
    log_path = root / "server.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(argv, env=env, stdout=log, stderr=log)
    try:
        _wait_for_port(port, process)
        yield Served(f"http://127.0.0.1:{port}/mcp", config_path, env, root / "data")
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
