"""A deployment for the literal-argument tests: an IMAP inbox holding one email per text that
reads as JSON, an account that sends through the test SMTP server, and arguments that make a
valid call of each tool, to which a test adds the one argument it checks."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from mcp.types import CallToolResult

from log_audit import register_all
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.bootstrap import Services
from mcp_tests.client import call, structured
from mcp_tests.deployment import _free_port, _wait_for_port, message
from servers.dovecot import DovecotServer, ImapAccount
from servers.smtp import SmtpServer
from sync.helpers import RemoteMailbox

TEXTS = ["null", "true", "1", "[]", "{}"]
# The texts a mail server can store as a keyword; the other two can be no keyword at all.
KEYWORDS = ["null", "true", "1"]
KEY = "key-literal-" + uuid.uuid4().hex
SMTP_USER = "literal-submitter"
SMTP_PASSWORD = "pw-" + uuid.uuid4().hex
OWNER = "owner-literal@example.net"
WRITER = "Literal Writer <literal-writer@example.org>"
ANSWERED = "Message to answer and pass on"
SENT = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)


def subject_of(text: str) -> str:
    return f"Literal note {text}"


@dataclass(frozen=True)
class LiteralDeployment:
    url: str
    smtp: SmtpServer
    answered_id: str
    config_path: Path
    env: dict[str, str]


def _config(imap_port: int, user: str, secret_env: str, root: Path, smtp_port: int) -> str:
    return f"""
[Store]
DataDir = "{root / "data"}"

[[Accounts]]
Id = "work"
DisplayName = "Work Mail"
Kind = "imap"

[Accounts.Imap]
Host = "127.0.0.1"
Port = {imap_port}
Username = "{user}"
Tls = "none"
Secret = {{ Env = "{secret_env}" }}

[[Accounts.Folders]]
Remote = "INBOX"
Alias = "INBOX"
Role = "Inbox"

[Accounts.Delivery]
Enabled = true
Address = "{OWNER}"

[Accounts.Delivery.Smtp]
Host = "127.0.0.1"
Port = {smtp_port}
Tls = "starttls"
Username = "{SMTP_USER}"
Secret = {{ Env = "MAILFATHOM_TEST_SMTP_SECRET" }}

[McpEndpoint]
Enabled = true
Listen = "127.0.0.1:8625"

[[McpEndpoint.Callers]]
Name = "agent"
Credential = "apiKey"
ApiKeySha256 = "{hashlib.sha256(KEY.encode()).hexdigest()}"
"""


def _populate(account: ImapAccount) -> None:
    mailbox = RemoteMailbox(account)
    try:
        for text in TEXTS:
            raw = message(subject_of(text), sent=SENT, sender=WRITER, to=OWNER)
            mailbox.append(raw, flags=text if text in KEYWORDS else "")
        mailbox.append(message(ANSWERED, sent=SENT, sender=WRITER, to=OWNER))
    finally:
        mailbox.close()


@pytest.fixture(scope="module")
def literal(
    dovecot: DovecotServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiteralDeployment]:
    """An inbox holding one email per text, its subject carrying the text and, where the text
    can be one, the text as its keyword. The server delivers through the test SMTP server."""
    register_all([WRITER, OWNER, ANSWERED, "literal-writer@example.org", SMTP_PASSWORD])
    suffix = uuid.uuid4().hex[:10]
    account = dovecot.add_user(f"literal-{suffix}", f"pw-{suffix}")
    _populate(account)
    root = tmp_path_factory.mktemp("literal")
    secret_env = f"MF_LITERAL_SECRET_{suffix.upper()}"
    smtp = SmtpServer({SMTP_USER: SMTP_PASSWORD}).start()
    env = {
        **os.environ,
        secret_env: account.password,
        "MAILFATHOM_TEST_SMTP_SECRET": SMTP_PASSWORD,
        "SSL_CERT_FILE": str(smtp.ca_path),
    }
    config_path = root / "mailfathom.toml"
    text = _config(account.port, account.username, secret_env, root, smtp.port)
    config_path.write_text(text, "utf-8")
    port = _free_port()
    argv = [sys.executable, "-m", "mailfathom", "serve", "--config", str(config_path)]
    argv += ["--port", str(port), "--deliver"]
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv(secret_env, account.password)
            patch.setenv("MAILFATHOM_TEST_SMTP_SECRET", SMTP_PASSWORD)
            config = load_config(config_path)
            with Services.open(config) as services:
                services.account_synchronizer().run_once(config.accounts[0])
        with (root / "server.log").open("wb") as log:
            process = subprocess.Popen(argv, env=env, stdout=log, stderr=log)
        try:
            _wait_for_port(port, process)
            url = f"http://127.0.0.1:{port}/mcp"
            found = structured(call(url, KEY, "list_emails", {"subjectFragment": ANSWERED}))
            (answered,) = found["emails"]
            yield LiteralDeployment(url, smtp, answered["storedEmailId"], config_path, env)
        finally:
            process.terminate()
            process.wait(timeout=15)
    finally:
        smtp.close()


def _someone() -> str:
    return f"someone-{uuid.uuid4().hex[:12]}@example.net"


def _send(d: LiteralDeployment) -> dict[str, Any]:
    return {
        "account": "work",
        "to": [_someone()],
        "subject": "An ordinary subject",
        "plainTextBody": "Ordinary words.",
        "idempotencyKey": uuid.uuid4().hex,
    }


def _reply(d: LiteralDeployment) -> dict[str, Any]:
    return {
        "storedEmailId": d.answered_id,
        "audience": "senderOnly",
        "cc": [_someone()],
        "plainTextBody": "Ordinary words.",
        "idempotencyKey": uuid.uuid4().hex,
    }


def _forward(d: LiteralDeployment) -> dict[str, Any]:
    return {
        "storedEmailId": d.answered_id,
        "to": [_someone()],
        "plainTextBody": "Ordinary words.",
        "idempotencyKey": uuid.uuid4().hex,
    }


def _draft(d: LiteralDeployment) -> dict[str, Any]:
    return {
        "account": "work",
        "to": [_someone()],
        "subject": "An ordinary subject",
        "plainTextBody": f"Ordinary words {uuid.uuid4().hex}.",
    }


def _answer_draft(d: LiteralDeployment) -> dict[str, Any]:
    return {
        "answeredEmailId": d.answered_id,
        "answering": "senderOnly",
        "plainTextBody": f"Ordinary words {uuid.uuid4().hex}.",
    }


def _saved_draft(d: LiteralDeployment) -> str:
    return str(structured(call(d.url, KEY, "save_draft", _draft(d)))["draftId"])


def _person() -> dict[str, Any]:
    """A record nobody holds yet: an address of its own, letters only."""
    address = "literal-" + "".join(chr(97 + int(c, 16)) for c in uuid.uuid4().hex[:12])
    address += "@example.org"
    return {"displayName": "Literal Person", "addresses": [address], "preferredAddress": address}


def _created_contact(d: LiteralDeployment) -> str:
    written = structured(call(d.url, KEY, "create_contact", _person()))
    return str(written["contact"]["contactId"])


BASE: dict[str, Callable[[LiteralDeployment], dict[str, Any]]] = {
    "list_emails": lambda d: {},
    "search_emails": lambda d: {"queryText": "literal"},
    "get_email_content": lambda d: {},
    "send_email": _send,
    "reply_to_email": _reply,
    "forward_email": _forward,
    "get_outgoing_email": lambda d: {},
    "cancel_outgoing_email": lambda d: {},
    "save_draft": _draft,
    "update_draft": lambda d: {"draftId": _saved_draft(d), **_draft(d)},
    "delete_draft": lambda d: {},
    # A draft that could be sent, so a refusal is the argument's own.
    "send_draft": lambda d: {"draftId": _saved_draft(d)},
    # Removing a keyword the email does not carry changes nothing another test reads.
    "set_mail_flags": lambda d: {
        "storedEmailId": d.answered_id,
        "keywordChange": "remove",
        "keywords": ["unused"],
    },
    "organize_email": lambda d: {
        "action": "unlabel",
        "storedEmailIds": [d.answered_id],
        "keywords": ["unused"],
    },
    "list_contacts": lambda d: {},
    "get_contact": lambda d: {},
    "create_contact": lambda d: _person(),
    "update_contact": lambda d: {"contactId": _created_contact(d), **_person()},
    "delete_contact": lambda d: {},
    "promote_contact": lambda d: {},
}
# A draft names one of two shapes: the arguments of an answer replace those of a message of
# its own where the argument checked belongs to an answer.
ANSWER_BASE: dict[str, Callable[[LiteralDeployment], dict[str, Any]]] = {
    "save_draft": _answer_draft,
    "update_draft": lambda d: {"draftId": _saved_draft(d), **_answer_draft(d)},
}


def call_with(d: LiteralDeployment, tool: str, **arguments: Any) -> CallToolResult:
    answer = "answering" in arguments or "answeredEmailId" in arguments
    base = ANSWER_BASE[tool](d) if answer else BASE[tool](d)
    return call(d.url, KEY, tool, {**base, **arguments})
