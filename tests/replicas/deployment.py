"""Two `mailfathom serve` replicas on one PostgreSQL, behind nginx alternating requests
between them with no affinity.

The replicas are configured as two machines would be: a data directory each (so each keeps
its own cursor key file, which replicas must not rely on), sharing the message content
directory (storage every machine reaches) and the configuration's `StateSecret`. The account
is synchronized once before serving; synchronization is off while serving and both replicas
deliver, with no hold, through the test SMTP server.
"""

from __future__ import annotations

import hashlib
import os
import secrets
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
from servers.nginx import RoundRobinBalancer
from servers.smtp import SmtpServer
from sync.helpers import RemoteMailbox

KEYS = {name: f"key-{name}-" + uuid.uuid4().hex for name in ("asks", "plain", "bounded")}
SESSIONS_PER_CALLER = 2
QUESTIONS_WAITING = 2
SUBJECTS = [f"Quarterly note {n} from the garden club" for n in range(5)]
SECRET_ENV = "MF_REPLICAS_TEST_STATE_SECRET"
IMAP_ENV = "MF_REPLICAS_TEST_IMAP_SECRET"


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


@dataclass(frozen=True)
class Replicated:
    url: str
    balancer: RoundRobinBalancer
    replica_ports: list[int]
    logs: list[Path]
    config_path: Path

    def services(self) -> Services:
        return Services.open(load_config(self.config_path))


def _message(subject: str) -> bytes:
    m = EmailMessage()
    m["From"] = "Club Secretary <secretary@example.com>"
    m["To"] = "owner@example.net"
    m["Subject"] = subject
    m["Message-ID"] = f"<{uuid.uuid4().hex}@example.com>"
    m.set_content("The minutes are attached to the next message.\n")
    return bytes(m)


def _config(data_dir: Path, database_url: str, imap: ImapAccount, smtp: SmtpServer) -> str:
    callers = "".join(
        f"""
[[McpEndpoint.Callers]]
Name = "{name}"
Credential = "apiKey"
ApiKeySha256 = "{_digest(key)}"
Confirmation = "{"ask" if name == "asks" else "none"}"
"""
        for name, key in KEYS.items()
    )
    return f"""
[Store]
DataDir = "{data_dir}"
DatabaseUrl = "{database_url}"

[Sync]
Enabled = false

[MailDelivery]
HoldSeconds = 0

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
Secret = {{ Env = "{IMAP_ENV}" }}

[[Accounts.Folders]]
Remote = "INBOX"
Role = "Inbox"

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
Replicas = true
StateSecret = {{ Env = "{SECRET_ENV}" }}
SessionsPerCaller = {SESSIONS_PER_CALLER}
ConfirmationTimeoutSeconds = 60
QuestionsWaitingPerCaller = {QUESTIONS_WAITING}
{callers}"""


def serve_replicas(
    root: Path, database_url: str, imap: ImapAccount, smtp: SmtpServer
) -> Iterator[Replicated]:
    register_all(SUBJECTS)
    mailbox = RemoteMailbox(imap)
    try:
        for subject in SUBJECTS:
            mailbox.append(_message(subject))
    finally:
        mailbox.close()
    os.environ[IMAP_ENV] = imap.password
    os.environ[SECRET_ENV] = secrets.token_hex(32)
    content = root / "content"
    paths = []
    for name in ("a", "b"):
        data_dir = root / name
        data_dir.mkdir(parents=True)
        (data_dir / "content").symlink_to(content, target_is_directory=True)
        path = root / f"{name}.toml"
        path.write_text(_config(data_dir, database_url, imap, smtp), "utf-8")
        paths.append(path)
    content.mkdir()
    config = load_config(paths[0])
    with Services.open(config) as services:
        services.account_synchronizer().run_once(config.accounts[0])
    env = {
        **os.environ,
        "MAILFATHOM_TEST_SMTP_SECRET": SMTP_PASSWORD,
        "SSL_CERT_FILE": str(smtp.ca_path),
    }
    ports = [_free_port(), _free_port()]
    logs = [root / "a.log", root / "b.log"]
    processes: list[subprocess.Popen[bytes]] = []
    balancer: RoundRobinBalancer | None = None
    try:
        for path, port, log_path in zip(paths, ports, logs, strict=True):
            argv = [sys.executable, "-m", "mailfathom", "serve", "--config", str(path)]
            with log_path.open("wb") as log:
                processes.append(
                    subprocess.Popen([*argv, "--port", str(port)], env=env, stdout=log, stderr=log)
                )
        for port, process in zip(ports, processes, strict=True):
            _wait_for_port(port, process)
        balancer = RoundRobinBalancer(ports).start()
        yield Replicated(f"http://127.0.0.1:{balancer.port}/mcp", balancer, ports, logs, paths[0])
    finally:
        if balancer is not None:
            balancer.stop()
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
