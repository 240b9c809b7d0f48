"""A deployment synchronized from the test Dovecot, served by `mailfathom serve` over HTTP."""

from __future__ import annotations

import hashlib
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path

import pytest

from log_audit import register, register_all
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.bootstrap import Services
from servers.dovecot import DovecotServer, ImapAccount
from sync.helpers import RemoteMailbox

KEYS = {
    "full": "key-full-" + uuid.uuid4().hex,
    "reader": "key-reader-" + uuid.uuid4().hex,
    "nothing": "key-nothing-" + uuid.uuid4().hex,
    "sender": "key-sender-" + uuid.uuid4().hex,
    "reader-sender": "key-reader-sender-" + uuid.uuid4().hex,
    "drafter": "key-drafter-" + uuid.uuid4().hex,
    "drafter-sender": "key-drafter-sender-" + uuid.uuid4().hex,
    "reader-files": "key-reader-files-" + uuid.uuid4().hex,
    "files": "key-files-" + uuid.uuid4().hex,
    "flagger": "key-flagger-" + uuid.uuid4().hex,
    "organizer": "key-organizer-" + uuid.uuid4().hex,
    "contacts-reader": "key-contacts-reader-" + uuid.uuid4().hex,
    "contacts-writer": "key-contacts-writer-" + uuid.uuid4().hex,
    "contacts": "key-contacts-" + uuid.uuid4().hex,
    "metrics": "key-metrics-" + uuid.uuid4().hex,
}
BASE = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)
FILLER_COUNT = 30
BULK_COUNT = 4


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def message(
    subject: str,
    *,
    sent: datetime,
    body: str = "Plain words.\n",
    sender: str = "Alice Example <alice@example.org>",
    to: str = "owner@example.net",
    message_id: str | None = None,
    in_reply_to: str | None = None,
    html: str | None = None,
    attachment: tuple[str, bytes] | None = None,
) -> bytes:
    m = EmailMessage()
    m["From"] = sender
    m["To"] = to
    m["Subject"] = subject
    m["Date"] = format_datetime(sent)
    m["Message-ID"] = message_id or f"<{uuid.uuid4().hex}@example.org>"
    if in_reply_to:
        m["In-Reply-To"] = in_reply_to
        m["References"] = in_reply_to
    register(subject, body, sender, to, html)
    m.set_content(body)
    if html is not None:
        m.add_alternative(html, subtype="html")
    if attachment is not None:
        name, data = attachment
        m.add_attachment(data, maintype="application", subtype="pdf", filename=name)
    return bytes(m)


@dataclass(frozen=True)
class Deployment:
    url: str
    config_path: Path
    env: dict[str, str]
    account_id: str
    data_dir: Path
    # The Dovecot user the deployment synchronizes, for a second client's view of the mailbox.
    account: ImapAccount | None = None

    @property
    def files_dir(self) -> Path:
        """The directory `MailDelivery.AttachmentRoots` allows."""
        return self.data_dir.parent / "files"

    @property
    def server_log(self) -> Path:
        return self.data_dir.parent / "server.log"

    @property
    def metrics_url(self) -> str:
        return self.url.removesuffix("/mcp") + "/metrics"


# Everything the fixture's mail carries that no log line may ever repeat.
SENSITIVE = [
    "Quarterly report draft",
    "quarterly-root@example.org",
    "alice@example.org",
    "bob@example.org",
    "carol@example.org",
    "dana@example.org",
    "owner@example.net",
    "Alice Example",
    "Revenue grew strongly",
    "revenue numbers look right",
    "Confidential remark",
    "Newsletter with pictures",
    "You won a prize",
    "Claim your prize",
    "Routine filler body",
    "Filler note",
    "figures.pdf",
]


# The folders the deployment's mail is in; Private is withheld from tools.
FOLDERS = """
[[Accounts.Folders]]
Remote = "INBOX"
Alias = "INBOX"
Role = "Inbox"

[[Accounts.Folders]]
Remote = "Archive"
Alias = "Archive"
Role = "Archive"

[[Accounts.Folders]]
Remote = "Junk"
Alias = "Junk"
Role = "Junk"

[[Accounts.Folders]]
Remote = "Bulk"
Alias = "Bulk"

[[Accounts.Folders]]
Remote = "Private"
Alias = "Private"
VisibleToTools = false
"""


def _config_text(account_host: str, port: int, user: str, secret_env: str, data: Path) -> str:
    return f"""
[Store]
DataDir = "{data}"

[MailDelivery]
AttachmentRoots = ["{data.parent / "files"}"]

[[Accounts]]
Id = "work"
DisplayName = "Work Mail"
Kind = "imap"
# An address to write drafts from (no delivery: nothing is sent from here).
Addresses = ["owner@example.net"]

[Accounts.Imap]
Host = "{account_host}"
Port = {port}
Username = "{user}"
Tls = "none"
Secret = {{ Env = "{secret_env}" }}

{FOLDERS}
[McpEndpoint]
Enabled = true
Listen = "127.0.0.1:8625"
MetricsApiKeySha256 = "{_digest(KEYS["metrics"])}"

[[McpEndpoint.Callers]]
Name = "full"
Credential = "apiKey"
ApiKeySha256 = "{_digest(KEYS["full"])}"

[[McpEndpoint.Callers]]
Name = "reader"
Credential = "apiKey"
ApiKeySha256 = "{_digest(KEYS["reader"])}"
Permissions = ["mailfathom.mail.read"]

[[McpEndpoint.Callers]]
Name = "nothing"
Credential = "apiKey"
ApiKeySha256 = "{_digest(KEYS["nothing"])}"
Permissions = []

[[McpEndpoint.Callers]]
Name = "sender"
Credential = "apiKey"
ApiKeySha256 = "{_digest(KEYS["sender"])}"
Permissions = ["mailfathom.mail.send"]

[[McpEndpoint.Callers]]
Name = "reader-sender"
Credential = "apiKey"
ApiKeySha256 = "{_digest(KEYS["reader-sender"])}"
Permissions = ["mailfathom.mail.read", "mailfathom.mail.send"]

[[McpEndpoint.Callers]]
Name = "drafter"
Credential = "apiKey"
ApiKeySha256 = "{_digest(KEYS["drafter"])}"
Permissions = ["mailfathom.mail.drafts.write"]

[[McpEndpoint.Callers]]
Name = "drafter-sender"
Credential = "apiKey"
ApiKeySha256 = "{_digest(KEYS["drafter-sender"])}"
Permissions = ["mailfathom.mail.drafts.write", "mailfathom.mail.send"]

[[McpEndpoint.Callers]]
Name = "reader-files"
Credential = "apiKey"
ApiKeySha256 = "{_digest(KEYS["reader-files"])}"
Permissions = ["mailfathom.mail.read", "mailfathom.files.write"]

[[McpEndpoint.Callers]]
Name = "files"
Credential = "apiKey"
ApiKeySha256 = "{_digest(KEYS["files"])}"
Permissions = ["mailfathom.files.write"]

[[McpEndpoint.Callers]]
Name = "flagger"
Credential = "apiKey"
ApiKeySha256 = "{_digest(KEYS["flagger"])}"
Permissions = ["mailfathom.mail.flags.write"]

[[McpEndpoint.Callers]]
Name = "organizer"
Credential = "apiKey"
ApiKeySha256 = "{_digest(KEYS["organizer"])}"
Permissions = ["mailfathom.mail.organize"]

[[McpEndpoint.Callers]]
Name = "contacts-reader"
Credential = "apiKey"
ApiKeySha256 = "{_digest(KEYS["contacts-reader"])}"
Permissions = ["mailfathom.mail.contacts.read"]

[[McpEndpoint.Callers]]
Name = "contacts-writer"
Credential = "apiKey"
ApiKeySha256 = "{_digest(KEYS["contacts-writer"])}"
Permissions = ["mailfathom.mail.contacts.write"]

[[McpEndpoint.Callers]]
Name = "contacts"
Credential = "apiKey"
ApiKeySha256 = "{_digest(KEYS["contacts"])}"
Permissions = ["mailfathom.mail.contacts.read", "mailfathom.mail.contacts.write"]

[[McpEndpoint.Callers]]
Name = "local"
Credential = "none"
"""


# Where a message is put: its folder, the message, its IMAP flags and when it arrived.
Put = Callable[[str, bytes, str, datetime], object]


def _populate(mailbox: RemoteMailbox) -> None:
    for folder in ("Archive", "Junk", "Private", "Bulk"):
        mailbox.conn.create(folder)
    fill_mail(lambda folder, raw, flags, _: mailbox.append(raw, folder=folder, flags=flags))


def fill_mail(put: Put) -> None:
    """The deployment's mail, each message handed to `put` with the time it was sent."""
    root_id = "<quarterly-root@example.org>"
    attachment = ("figures.pdf", b"%PDF-1.4 test figures")
    body = "The quarterly figures are attached. Revenue grew strongly.\n"
    put(
        "INBOX",
        message("Quarterly report draft", sent=BASE, body=body, message_id=root_id,
                attachment=attachment),
        "",
        BASE,
    )  # fmt: skip
    for hours, sender, text, folder in (
        (1, "Bob Example <bob@example.org>", "Thanks, the revenue numbers look right.", "Archive"),
        (2, "Carol Hidden <carol@example.org>", "Confidential remark on the quarterly numbers.",
         "Private"),
    ):  # fmt: skip
        sent = BASE + timedelta(hours=hours)
        reply = message(
            "Re: Quarterly report draft",
            sent=sent,
            sender=sender,
            body=text + "\n",
            message_id=f"<quarterly-reply-{hours}@example.org>",
            in_reply_to=root_id,
        )
        put(folder, reply, "", sent)
    sent = BASE + timedelta(hours=3)
    html = (
        "<p>Hello <b>reader</b><script>alert(1)</script>"
        '<img src="https://tracker.example/p.gif"></p>'
    )
    newsletter = message(
        "Newsletter with pictures", sent=sent, body="Plain version of the newsletter.\n", html=html
    )
    put("INBOX", newsletter, "\\Flagged $Important", sent)
    sent = BASE + timedelta(hours=4)
    put("Junk", message("You won a prize", sent=sent, body="Claim your prize now.\n"), "", sent)
    for n in range(BULK_COUNT):
        sent = BASE - timedelta(days=100 + n)
        bulk = f"row {n} " + "lorem ipsum dolor sit amet " * 2400
        put("Bulk", message(f"Bulk export {n}", sent=sent, body=bulk), "", sent)
    for n in range(FILLER_COUNT):
        sent = BASE - timedelta(days=n + 1)
        filler = message(
            f"Filler note {n:02d}",
            sent=sent,
            body=f"Routine filler body number {n}.\n",
            sender="Dana Filler <dana@example.org>",
        )
        put("INBOX", filler, "\\Seen" if n % 2 else "", sent)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for_port(port: int, process: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError("the MCP server exited during start-up")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError("the MCP server did not start listening")


@pytest.fixture(scope="session")
def mcp_deployment(
    dovecot: DovecotServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Deployment]:
    yield from deploy(dovecot, tmp_path_factory)


def deploy(
    dovecot: DovecotServer,
    tmp_path_factory: pytest.TempPathFactory,
    *,
    more_config: Callable[[ImapAccount, str], str] | None = None,
    more_mail: Callable[[RemoteMailbox], None] | None = None,
    port: int | None = None,
) -> Iterator[Deployment]:
    """A deployment of its own: its own Dovecot user, store and server process.
    `more_config` gives what is added to the configuration, from the Dovecot user and the
    name of the variable holding its password (a `[[Accounts.Folders]]` entry names a folder
    of the account), and `more_mail` fills the mailbox further before the first
    synchronization. `port` is where the server listens (a free port when None), for a
    configuration that names the server's own address."""
    register_all(SENSITIVE)
    suffix = uuid.uuid4().hex[:10]
    account = dovecot.add_user(f"mcp-{suffix}", f"pw-{suffix}")
    mailbox = RemoteMailbox(account)
    try:
        _populate(mailbox)
        if more_mail is not None:
            more_mail(mailbox)
    finally:
        mailbox.close()
    root = tmp_path_factory.mktemp("mcp")
    (root / "files").mkdir()
    secret_env = f"MF_MCP_TEST_SECRET_{suffix.upper()}"
    env = {**os.environ, secret_env: account.password}
    os.environ[secret_env] = account.password
    config_path = root / "mailfathom.toml"
    config_path.write_text(
        _config_text(account.host, account.port, account.username, secret_env, root / "data")
        + (more_config(account, secret_env) if more_config is not None else ""),
        "utf-8",
    )
    config = load_config(config_path)
    with Services.open(config) as services:
        services.account_synchronizer().run_once(config.accounts[0])
    port = port if port is not None else _free_port()
    log_path = root / "server.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "mailfathom", "serve", "--config", str(config_path),
             "--port", str(port)],
            env=env,
            stdout=log,
            stderr=log,
        )  # fmt: skip
    try:
        _wait_for_port(port, process)
        yield Deployment(
            f"http://127.0.0.1:{port}/mcp", config_path, env, "work", root / "data", account
        )
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
