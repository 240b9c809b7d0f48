"""From nothing to an agent reading and sending mail of an account that logs in with OAuth:
`mailfathom init --provider generic-oauth` (a process, no terminal, the person approving the
device code), `mailfathom sync`, `mailfathom serve`, and the official MCP client over HTTP
reading the mail and sending one message, which the person confirms in the client and the
delivery pass hands to the submission server, logged in with an OAuth mechanism (once in
each protocol generation of the client). The
refresh token appears in no output of any command and in no log line.

Every server is real: the authorization server (authlib) on loopback, a Dovecot validating
tokens by introspection, an SMTP server offering XOAUTH2 and OAUTHBEARER only."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

from confirmation.asking import Person, choosing
from log_audit import copy_path, register_all
from mcp_tests.client import structured
from mcp_tests.deployment import _free_port, _wait_for_port
from servers.dovecot import DovecotServer, ImapAccount
from servers.oauth import OAuthServer
from servers.smtp import Received, SmtpServer
from snippet_text import PrintedSnippets
from waiting import wait_for

from .init_runs import CommandRun, Finished, init_by_device

ARRIVED_SUBJECT = "Minutes of the garden committee"
ARRIVED_BODY = "The hedge gets trimmed on the first Saturday of the month.\n"
SENT_SUBJECT = "Hedge trimming volunteers"
SENT_BODY = "Count me in for the first Saturday.\n"
ADDRESS = "member@garden.example"
FRIEND = "chair@garden.example"
MODES = ["2026-07-28", "legacy"]


@pytest.fixture(scope="module")
def oauth_smtp(oauth_server: OAuthServer) -> Iterator[SmtpServer]:
    """A submission server that takes no password at all: only a token it introspects."""
    server = SmtpServer({}, oauth=oauth_server).start()
    try:
        yield server
    finally:
        server.close()


def _arrived(dovecot: DovecotServer, account: ImapAccount) -> None:
    message = EmailMessage()
    message["From"] = FRIEND
    message["To"] = ADDRESS
    message["Subject"] = ARRIVED_SUBJECT
    message["Message-ID"] = f"<{uuid.uuid4().hex}@garden.example>"
    message.set_content(ARRIVED_BODY)
    dovecot.save_message(account.username, bytes(message))


def _call(
    url: str, key: str, tool: str, arguments: dict[str, Any], person: Person, mode: str
) -> Any:
    async def run() -> CallToolResult:
        headers = {"Authorization": f"Bearer {key}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=60)) as http,
            Client(
                streamable_http_client(url, http_client=http),
                mode=mode,
                elicitation_callback=person,
            ) as client,
        ):
            return await client.call_tool(tool, arguments)

    return structured(anyio.run(run))


def _served(root: Path, config: Path, env: dict[str, str]) -> tuple[subprocess.Popen[bytes], Path]:
    log = root / "serve.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "mailfathom", "serve", "--config", str(config)],
            env={**os.environ, **env},
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
        )
    return process, log


def test_an_agent_reads_and_sends_the_mail_of_an_account_init_connected_with_oauth(
    oauth_server: OAuthServer,
    oauth_dovecot: DovecotServer,
    oauth_imap_account: ImapAccount,
    oauth_smtp: SmtpServer,
    client_id: str,
    tmp_path: Path,
) -> None:
    register_all([ARRIVED_SUBJECT, ARRIVED_BODY.strip(), SENT_SUBJECT, SENT_BODY.strip()])
    register_all([ADDRESS, FRIEND])
    _arrived(oauth_dovecot, oauth_imap_account)
    env = {"SSL_CERT_FILE": str(oauth_smtp.ca_path)}
    mcp_port = _free_port()
    config, initialized = init_by_device(
        oauth_server,
        client_id,
        oauth_imap_account,
        tmp_path,
        "--smtp-host", oauth_smtp.host, "--smtp-port", str(oauth_smtp.port),
        "--smtp-security", "starttls", "--address", ADDRESS, "--mcp-port", str(mcp_port),
        env=env,
    )  # fmt: skip
    token_file = tmp_path / "secrets" / "mail.refresh"
    tokens = {token_file.read_text("utf-8").strip()}
    outputs: list[Finished] = [initialized]

    synced = CommandRun(tmp_path, ["sync", "--config", str(config)], env).finish()
    assert synced.returncode == 0, synced.stdout + synced.stderr
    outputs.append(synced)
    tokens.add(token_file.read_text("utf-8").strip())

    url, headers = PrintedSnippets.parse(initialized.stdout).http_url_and_headers()
    assert url == f"http://127.0.0.1:{mcp_port}/mcp"
    key = headers["Authorization"].removeprefix("Bearer ")
    process, serve_log = _served(tmp_path, config, env)
    try:
        _wait_for_port(mcp_port, process)
        for mode in MODES:
            person = Person(choosing("send"))
            page = _call(url, key, "list_emails", {"accounts": ["mail"]}, person, mode)
            (summary,) = [e for e in page["emails"] if e["subject"] == ARRIVED_SUBJECT]
            arguments = {"storedEmailIds": [summary["storedEmailId"]]}
            read = _call(url, key, "get_email_content", arguments, person, mode)
            text = read["emails"][0]["content"]["body"]["plainText"]["text"]
            assert ARRIVED_BODY.strip() in text

            subject = f"{SENT_SUBJECT} ({mode})"
            sending = {
                "account": "mail",
                "to": [FRIEND],
                "subject": subject,
                "plainTextBody": SENT_BODY,
                "idempotencyKey": uuid.uuid4().hex,
            }
            sent = _call(url, key, "send_email", sending, person, mode)
            assert (sent["status"], sent["state"]) == ("queued", "queued")
            (asked,) = person.asked
            assert subject in asked.message

        def all_received() -> list[Received] | None:
            found = oauth_smtp.received()
            return found if len(found) == len(MODES) else None

        received = wait_for(
            all_received, "the submission server received one send per protocol generation"
        )
    finally:
        process.terminate()
        process.wait(timeout=30)
    for each, mode in zip(
        sorted(received, key=lambda r: b"legacy" in r.content), MODES, strict=True
    ):
        assert each.mechanism in ("XOAUTH2", "OAUTHBEARER")
        assert each.login == oauth_imap_account.username
        assert each.tls
        assert each.rcpt_tos == [FRIEND]
        assert f"{SENT_SUBJECT} ({mode})".encode() in each.content

    tokens.add(token_file.read_text("utf-8").strip())
    register_all(tokens)
    printed = "\n".join(f.stdout + f.stderr for f in outputs) + serve_log.read_text("utf-8")
    logged = copy_path()
    assert logged is not None
    everything = printed + logged.read_text("utf-8") + config.read_text("utf-8")
    for token in tokens:
        assert token
        assert token not in everything
