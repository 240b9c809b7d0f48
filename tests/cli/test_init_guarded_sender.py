"""What `mailfathom init` writes for the agent it makes a key for: a grant named permission by
permission, and a person asked before anything the agent composes leaves. Checked on the file
and then by serving that very file, over HTTP in both protocol generations and over stdio,
with the official client answering the question."""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, ElicitRequestParams, ElicitResult

from log_audit import register_all
from mailfathom.adapters.config import load_config
from mailfathom.bootstrap import Services
from mailfathom.domain.access import ConfirmationMode, Permission
from mcp_tests.client import structured
from mcp_tests.deployment import _free_port
from sending.served import serve
from servers.dovecot import DovecotServer, ImapAccount
from servers.smtp import SmtpServer
from snippet_text import PrintedSnippets

from .test_init import SECRET_ENV, SMTP_PASSWORD, SMTP_SECRET_ENV, SMTP_USER, imap_flags, run_init
from .test_init import smtp as smtp

READING_AND_WRITING = {
    Permission.MAIL_READ,
    Permission.FLAGS_WRITE,
    Permission.ORGANIZE,
    Permission.DRAFTS_WRITE,
    Permission.ASK,
    Permission.CONTACTS_READ,
    Permission.CONTACTS_WRITE,
}
SUBJECT = "Tickets for the Thursday concert"
BODY = "I can pick up the tickets on my way home.\n"
FRIEND = "friend@example.org"


def _environment(account: ImapAccount, smtp: SmtpServer) -> dict[str, str]:
    return {
        SECRET_ENV: account.password,
        SMTP_SECRET_ENV: SMTP_PASSWORD,
        "SSL_CERT_FILE": str(smtp.ca_path),
    }


def _init_with_sending(
    account: ImapAccount, smtp: SmtpServer, root: Path
) -> tuple[Path, subprocess.CompletedProcess[str]]:
    register_all([SMTP_PASSWORD, account.password])
    config = root / "mailfathom.toml"
    done = run_init(
        root, *imap_flags(account, config),
        "--smtp-host", smtp.host, "--smtp-port", str(smtp.port), "--smtp-security", "starttls",
        "--smtp-user", SMTP_USER, "--smtp-secret-env", SMTP_SECRET_ENV,
        "--mcp-port", str(_free_port()),
        env=_environment(account, smtp),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return config, done


def test_with_sending_the_caller_is_asked_and_its_grant_is_written_out(
    imap_account: ImapAccount, smtp: SmtpServer, tmp_path: Path
) -> None:
    config, done = _init_with_sending(imap_account, smtp, tmp_path)
    (entry,) = load_config(config).mcp.callers
    assert entry.confirmation is ConfirmationMode.ASK
    assert entry.permissions == frozenset(READING_AND_WRITING | {Permission.SEND})
    text = config.read_text("utf-8")
    assert 'Confirmation = "ask"' in text
    assert '"mailfathom.mail.send"' in text
    assert "mailfathom.files.write" not in text
    assert 'Confirmation = "ask"' in done.stdout
    assert "mailfathom.mail.send" in done.stdout


def test_without_sending_the_grant_names_no_send(imap_account: ImapAccount, tmp_path: Path) -> None:
    config = tmp_path / "mailfathom.toml"
    done = run_init(
        tmp_path, *imap_flags(imap_account, config), env={SECRET_ENV: imap_account.password}
    )
    assert done.returncode == 0, done.stderr
    (entry,) = load_config(config).mcp.callers
    assert entry.permissions == frozenset(READING_AND_WRITING)
    assert entry.confirmation is ConfirmationMode.ASK
    assert "mailfathom.mail.send" not in done.stdout


@dataclass(frozen=True)
class Initialized:
    config: Path
    key: str
    url: str
    env: dict[str, str]


@pytest.fixture(scope="module")
def initialized(
    dovecot: DovecotServer, smtp: SmtpServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Initialized]:
    suffix = uuid.uuid4().hex[:10]
    account = dovecot.add_user(f"init-send-{suffix}", f"pw-{suffix}")
    root = tmp_path_factory.mktemp("init-send")
    config, done = _init_with_sending(account, smtp, root)
    _, headers = PrintedSnippets.parse(done.stdout).http_url_and_headers()
    key = headers["Authorization"].removeprefix("Bearer ")
    secrets = _environment(account, smtp)
    with pytest.MonkeyPatch.context() as patch:
        for name, value in secrets.items():
            patch.setenv(name, value)
        for served in serve(root, config.read_text("utf-8"), smtp, deliver=False):
            yield Initialized(config, key, served.url, served.env)


class Person:
    """Answers Cancel, keeping what it was asked."""

    def __init__(self) -> None:
        self.asked: list[ElicitRequestParams] = []

    async def __call__(self, context: Any, params: ElicitRequestParams) -> ElicitResult:
        self.asked.append(params)
        return ElicitResult(action="accept", content={"choice": "cancel"})


def _arguments() -> dict[str, Any]:
    register_all([SUBJECT, BODY.strip(), FRIEND])
    return {
        "account": "mail",
        "to": [FRIEND],
        "subject": SUBJECT,
        "plainTextBody": BODY,
        "idempotencyKey": uuid.uuid4().hex,
    }


def _outbox_keys(config: Path) -> set[str]:
    with Services.open(load_config(config)) as services:
        return {entry.idempotency_key for entry in services.outbox().listing(1000)}


def _asked_and_cancelled(
    initialized: Initialized, person: Person, result: CallToolResult, key: str
) -> None:
    answer = structured(result)
    assert (answer["status"], answer["sent"]) == ("cancelled", False)
    (asked,) = person.asked
    assert SUBJECT in asked.message
    assert key not in _outbox_keys(initialized.config)


@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
def test_the_agent_init_made_is_asked_before_a_message_leaves(
    initialized: Initialized, mode: str
) -> None:
    person = Person()
    arguments = _arguments()

    async def run() -> CallToolResult:
        headers = {"Authorization": f"Bearer {initialized.key}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=60)) as http,
            Client(
                streamable_http_client(initialized.url, http_client=http),
                mode=mode,
                elicitation_callback=person,
            ) as client,
        ):
            return await client.call_tool("send_email", arguments)

    result = anyio.run(run)
    _asked_and_cancelled(initialized, person, result, arguments["idempotencyKey"])


def test_the_stdio_configuration_init_prints_asks_too(
    initialized: Initialized, tmp_path: Path
) -> None:
    # The printed stdio entry runs `serve --stdio` on the file init wrote, which names no
    # entry without a key: the stdio caller is asked as well.
    person = Person()
    arguments = _arguments()

    async def run() -> CallToolResult:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "mailfathom", "serve", "--stdio", "--config", str(initialized.config)],
            env=initialized.env,
        )
        with (tmp_path / "stdio.log").open("a") as log:
            async with Client(
                stdio_client(params, errlog=log), elicitation_callback=person
            ) as client:
                return await client.call_tool("send_email", arguments)

    result = anyio.run(run)
    _asked_and_cancelled(initialized, person, result, arguments["idempotencyKey"])
