"""A deployment whose callers are asked before mail leaves, served by `mailfathom serve`.

The account is synchronized from the test Dovecot once before serving (synchronization is off
while serving, so no connection to it is open unless a call opens one) and sends through the
test SMTP server only after an hour's hold (nothing leaves while a test looks). `asks` has a
person confirm every send; `plain` does not.
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

from log_audit import register_all
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.bootstrap import Services
from mcp_tests.deployment import _free_port, _wait_for_port
from sending.helpers import SMTP_PASSWORD, SMTP_USER
from servers.dovecot import ImapAccount
from servers.smtp import SmtpServer
from sync.helpers import RemoteMailbox

KEYS = {"asks": "key-asks-" + uuid.uuid4().hex, "plain": "key-plain-" + uuid.uuid4().hex}
TIMEOUT_SECONDS = 4.0
ANSWERED_SUBJECT = "Budget review for the autumn"
ANSWERED_BODY = "Could you look at the attached budget before Friday?\n"
ATTACHED = ("budget-autumn.pdf", b"%PDF-1.4 " + b"b" * 3000)
SENSITIVE = [
    ANSWERED_SUBJECT,
    ANSWERED_BODY.strip(),
    ATTACHED[0],
    "Petra Sender",
    "petra@example.com",
    "owner@example.net",
    "Owner Desk",
]


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


@dataclass(frozen=True)
class Served:
    url: str
    config_path: Path
    root: Path
    smtp_port: int
    imap_port: int
    imap: ImapAccount

    def services(self) -> Services:
        return Services.open(load_config(self.config_path))


def answered_message() -> bytes:
    m = EmailMessage()
    m["From"] = "Petra Sender <petra@example.com>"
    m["To"] = "owner@example.net"
    m["Subject"] = ANSWERED_SUBJECT
    m["Message-ID"] = f"<{uuid.uuid4().hex}@example.com>"
    m.set_content(ANSWERED_BODY)
    m.add_attachment(ATTACHED[1], maintype="application", subtype="pdf", filename=ATTACHED[0])
    return bytes(m)


def _config(root: Path, imap: ImapAccount, smtp: SmtpServer, secret_env: str) -> str:
    return f"""
[Store]
DataDir = "{root / "data"}"

[Sync]
Enabled = false

[MailDelivery]
HoldSeconds = 3600

[[Accounts]]
Id = "work"
DisplayName = "Work"
Kind = "imap"
Addresses = ["owner@example.net"]

[Accounts.Imap]
Host = "{imap.host}"
Port = {imap.port}
Username = "{imap.username}"
Tls = "none"
Secret = {{ Env = "{secret_env}" }}

[[Accounts.Folders]]
Remote = "INBOX"
Role = "Inbox"

[[Accounts.Folders]]
Remote = "Hidden"
VisibleToTools = false

[Accounts.Delivery]
Enabled = true
Address = "owner@example.net"
DisplayName = "Owner Desk"

[Accounts.Delivery.Smtp]
Host = "127.0.0.1"
Port = {smtp.port}
Tls = "starttls"
Username = "{SMTP_USER}"
Secret = {{ Env = "MAILFATHOM_TEST_SMTP_SECRET" }}

[McpEndpoint]
Enabled = true
Listen = "127.0.0.1:8625"
ConfirmationTimeoutSeconds = {TIMEOUT_SECONDS}

[[McpEndpoint.Callers]]
Name = "asks"
Credential = "apiKey"
ApiKeySha256 = "{_digest(KEYS["asks"])}"
Confirmation = "ask"

[[McpEndpoint.Callers]]
Name = "plain"
Credential = "apiKey"
ApiKeySha256 = "{_digest(KEYS["plain"])}"
"""


def serve(root: Path, imap: ImapAccount, smtp: SmtpServer) -> Iterator[Served]:
    register_all(SENSITIVE)
    mailbox = RemoteMailbox(imap)
    try:
        mailbox.conn.create("Hidden")
        mailbox.append(answered_message())
    finally:
        mailbox.close()
    root.mkdir(parents=True, exist_ok=True)
    secret_env = "MF_CONFIRMATION_TEST_IMAP_SECRET"
    os.environ[secret_env] = imap.password
    config_path = root / "mailfathom.toml"
    config_path.write_text(_config(root, imap, smtp, secret_env), "utf-8")
    config = load_config(config_path)
    with Services.open(config) as services:
        services.account_synchronizer().run_once(config.accounts[0])
    env = {
        **os.environ,
        "MAILFATHOM_TEST_SMTP_SECRET": SMTP_PASSWORD,
        "SSL_CERT_FILE": str(smtp.ca_path),
    }
    port = _free_port()
    argv = [sys.executable, "-m", "mailfathom", "serve", "--config", str(config_path)]
    argv += ["--port", str(port), "--no-deliver"]
    with (root / "server.log").open("wb") as log:
        process = subprocess.Popen(argv, env=env, stdout=log, stderr=log)
    try:
        _wait_for_port(port, process)
        yield Served(f"http://127.0.0.1:{port}/mcp", config_path, root, smtp.port, imap.port, imap)
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def open_connections(port: int) -> int:
    """Established TCP connections whose local end is `port` on this machine (the server's
    side of every connection a client opened to it), read from /proc/net."""
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local, state = fields[1], fields[3]
            if state == "01" and int(local.rsplit(":", 1)[1], 16) == port:
                count += 1
    return count
