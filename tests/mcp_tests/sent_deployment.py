"""A deployment for the sent-time filters: an IMAP inbox whose messages were sent (Date:) in
one order and received (INTERNALDATE) in the other, beside one message without a Date header
and one whose Date header names no instant."""

from __future__ import annotations

import hashlib
import imaplib
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from email.message import EmailMessage
from email.utils import format_datetime

import pytest

from log_audit import register_all
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.bootstrap import Services
from mcp_tests.deployment import _free_port, _wait_for_port
from servers.dovecot import DovecotServer, ImapAccount
from sync.helpers import RemoteMailbox

KEY = "key-sent-" + uuid.uuid4().hex
SENDER = "Orchard Keeper <orchard-keeper@example.org>"
OWNER = "owner-sent@example.net"
SENT0 = datetime(2026, 4, 1, 10, 0, tzinfo=UTC)
RECEIVED0 = datetime(2026, 4, 10, 8, 0, tzinfo=UTC)
DATED = 5
UNDATED = "Orchard note without a date"
BADLY_DATED = "Orchard note with a date that names no instant"


def sent(n: int) -> datetime:
    return SENT0 + timedelta(days=n)


def received(n: int) -> datetime:
    """Dated note n is received n days before the first: the received order is the reverse
    of the sent order, so a filter on the wrong time finds the wrong notes."""
    return RECEIVED0 - timedelta(days=n)


def subject(n: int) -> str:
    return f"Orchard note {n}"


@dataclass(frozen=True)
class SentDeployment:
    url: str


def _raw(title: str, date: str | None, body: str) -> bytes:
    m = EmailMessage()
    m["From"] = SENDER
    m["To"] = OWNER
    m["Subject"] = title
    if date is not None:
        m["Date"] = date
    m["Message-ID"] = f"<{uuid.uuid4().hex}@example.org>"
    m.set_content(body)
    return bytes(m)


def _body(n: int) -> str:
    # Every note carries "orchard"; the odd-numbered ones and the undated one "pruning" too.
    return "Orchard diary entry.\n" + ("Pruning today.\n" if n % 2 else "")


def _populate(account: ImapAccount) -> None:
    mailbox = RemoteMailbox(account)
    east = timezone(timedelta(hours=2))
    try:
        for n in range(DATED):
            # Written in a zone of its own: the filter compares instants, not wall clocks.
            date = format_datetime(sent(n).astimezone(east) if n == 1 else sent(n))
            raw = _raw(subject(n), date, _body(n))
            when = imaplib.Time2Internaldate(received(n))
            typ, data = mailbox.conn.append("INBOX", None, when, raw)
            assert typ == "OK", data
        others: tuple[tuple[str, str | None], ...] = ((UNDATED, None), (BADLY_DATED, "spring"))
        for n, (title, header) in enumerate(others):
            when = imaplib.Time2Internaldate(RECEIVED0 + timedelta(days=1 + n))
            typ, data = mailbox.conn.append("INBOX", None, when, _raw(title, header, _body(1)))
            assert typ == "OK", data
    finally:
        mailbox.close()


def _config(account: ImapAccount, secret_env: str, data: str) -> str:
    return f"""
[Store]
DataDir = "{data}"

[[Accounts]]
Id = "work"
Kind = "imap"

[Accounts.Imap]
Host = "{account.host}"
Port = {account.port}
Username = "{account.username}"
Tls = "none"
Secret = {{ Env = "{secret_env}" }}

[[Accounts.Folders]]
Remote = "INBOX"
Alias = "INBOX"
Role = "Inbox"

[McpEndpoint]
Enabled = true
Listen = "127.0.0.1:8625"

[[McpEndpoint.Callers]]
Name = "agent"
Credential = "apiKey"
ApiKeySha256 = "{hashlib.sha256(KEY.encode()).hexdigest()}"
"""


@pytest.fixture(scope="module")
def sent_deployment(
    dovecot: DovecotServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SentDeployment]:
    register_all([SENDER, OWNER, "orchard-keeper@example.org", UNDATED, BADLY_DATED])
    register_all([subject(n) for n in range(DATED)] + ["Orchard diary entry", "Pruning today"])
    suffix = uuid.uuid4().hex[:10]
    account = dovecot.add_user(f"sent-{suffix}", f"pw-{suffix}")
    _populate(account)
    root = tmp_path_factory.mktemp("sent")
    secret_env = f"MF_SENT_SECRET_{suffix.upper()}"
    config_path = root / "mailfathom.toml"
    config_path.write_text(_config(account, secret_env, str(root / "data")), "utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(secret_env, account.password)
        config = load_config(config_path)
        with Services.open(config) as services:
            services.account_synchronizer().run_once(config.accounts[0])
    port = _free_port()
    argv = [sys.executable, "-m", "mailfathom", "serve", "--config", str(config_path)]
    argv += ["--port", str(port), "--no-sync", "--no-deliver"]
    env = {**os.environ, secret_env: account.password}
    with (root / "server.log").open("wb") as log:
        process = subprocess.Popen(argv, env=env, stdout=log, stderr=log)
    try:
        _wait_for_port(port, process)
        yield SentDeployment(f"http://127.0.0.1:{port}/mcp")
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
