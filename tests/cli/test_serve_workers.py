"""`mailfathom serve` as the one command a user runs: it keeps the account synchronized and
delivers what was queued, with flags to leave either to another process. Real Dovecot, a
real submission server, and the official MCP client over HTTP and stdio."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest
from mcp.client import Client

from log_audit import register_all
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.app.sending.send_email import SendRequest
from mailfathom.bootstrap import Services
from mailfathom.domain.access import ALL_PERMISSIONS, Caller
from mcp_tests.client import call, over_stdio, structured
from mcp_tests.deployment import _free_port, _wait_for_port
from servers.dovecot import ImapAccount
from servers.smtp import SmtpServer
from sync.helpers import RemoteMailbox, sample

SMTP_USER = "submitter"
SMTP_PASSWORD = "pw-" + uuid.uuid4().hex
ADDRESS = "serve-owner@example.org"
DEADLINE = 60.0
T = TypeVar("T")


@pytest.fixture(scope="module")
def smtp() -> Iterator[SmtpServer]:
    server = SmtpServer({SMTP_USER: SMTP_PASSWORD}).start()
    yield server
    server.close()


@dataclass
class Setup:
    root: Path
    config: Path
    env: dict[str, str]
    account: ImapAccount


@pytest.fixture
def setup(tmp_path: Path, imap_account: ImapAccount, smtp: SmtpServer) -> Setup:
    register_all([ADDRESS, "reader@example.net", SMTP_PASSWORD, imap_account.password])
    smtp.clear()
    remote = RemoteMailbox(imap_account)
    try:
        remote.conn.create("Sent")
    finally:
        remote.close()
    imap_env = f"MF_SERVE_IMAP_{uuid.uuid4().hex[:8].upper()}"
    smtp_env = f"MF_SERVE_SMTP_{uuid.uuid4().hex[:8].upper()}"
    config = tmp_path / "mailfathom.toml"
    config.write_text(
        f"""
[Store]
DataDir = "{tmp_path / "data"}"

[[Accounts]]
Id = "work"
Kind = "imap"
SyncMode = "push"
Addresses = ["{ADDRESS}"]

[Accounts.Imap]
Host = "{imap_account.host}"
Port = {imap_account.port}
Username = "{imap_account.username}"
Tls = "none"
Secret = {{ Env = "{imap_env}" }}

[[Accounts.Folders]]
Remote = "INBOX"
Role = "Inbox"

[[Accounts.Folders]]
Remote = "Sent"
Role = "Sent"

[Accounts.Delivery]
Enabled = true
Address = "{ADDRESS}"

[Accounts.Delivery.Smtp]
Host = "127.0.0.1"
Port = {smtp.port}
Tls = "starttls"
Username = "{SMTP_USER}"
Secret = {{ Env = "{smtp_env}" }}

[McpEndpoint]
Enabled = true

[[McpEndpoint.Callers]]
Name = "local"
Credential = "none"
""",
        "utf-8",
    )
    env = {
        **os.environ,
        imap_env: imap_account.password,
        smtp_env: SMTP_PASSWORD,
        "SSL_CERT_FILE": str(smtp.ca_path),
    }
    return Setup(tmp_path, config, env, imap_account)


@dataclass
class Serving:
    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def events(self, name: str) -> list[dict[str, Any]]:
        found = []
        for line in self.log.read_text("utf-8", "replace").splitlines():
            if line.startswith("{"):
                event = json.loads(line)
                if event.get("event") == name:
                    found.append(event)
        return found


@contextlib.contextmanager
def _serve(setup: Setup, *flags: str) -> Iterator[Serving]:
    port = _free_port()
    log = setup.root / "serve.log"
    argv = [sys.executable, "-m", "mailfathom", "serve", "--config", str(setup.config)]
    with log.open("wb") as out:
        process = subprocess.Popen(
            [*argv, "--port", str(port), *flags], env=setup.env, stdout=out, stderr=out
        )
    try:
        _wait_for_port(port, process)
        yield Serving(f"http://127.0.0.1:{port}/mcp", process, log)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def _wait(condition: Callable[[], T], what: str, timeout: float = DEADLINE) -> T:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, what
        time.sleep(0.3)


def _subjects(url: str, folder: str) -> list[str]:
    page = structured(call(url, None, "list_emails", {"accounts": ["work"], "folders": [folder]}))
    return [e["subject"] for e in page["emails"]]


def _send(url: str, subject: str) -> str:
    result = call(
        url,
        None,
        "send_email",
        {
            "account": "work",
            "to": ["reader@example.net"],
            "subject": subject,
            "plainTextBody": "Written through the served tools.\n",
            "idempotencyKey": uuid.uuid4().hex,
        },
    )
    return str(structured(result)["outgoingEmailId"])


def _state(url: str, outgoing_id: str) -> dict[str, Any]:
    return structured(call(url, None, "get_outgoing_email", {"outgoingEmailId": outgoing_id}))


def _append(account: ImapAccount, subject: str, folder: str = "INBOX") -> None:
    remote = RemoteMailbox(account)
    try:
        remote.append(sample(subject), folder)
    finally:
        remote.close()


def _server_subjects(account: ImapAccount, folder: str) -> int:
    remote = RemoteMailbox(account)
    try:
        typ, data = remote.conn.select(folder, readonly=True)
        assert typ == "OK"
        return int(data[0] or 0)
    finally:
        remote.close()


def _stop(serving: Serving) -> int:
    serving.process.send_signal(signal.SIGTERM)
    return serving.process.wait(timeout=DEADLINE)


def test_serve_synchronizes_new_mail_and_keeps_sent_copies_on_its_own(
    setup: Setup, smtp: SmtpServer
) -> None:
    arrived = "Arrived while serving " + uuid.uuid4().hex[:6]
    outgoing = "Sent while serving " + uuid.uuid4().hex[:6]
    register_all([arrived, outgoing])
    with _serve(setup) as serving:
        (started,) = serving.events("serve.started")
        assert (started["synchronizing"], started["delivering"]) == (["work"], True)
        _append(setup.account, arrived)
        _wait(lambda: arrived in _subjects(serving.url, "INBOX"), "new mail was not synchronized")

        identifier = _send(serving.url, outgoing)
        _wait(lambda: _state(serving.url, identifier)["state"] == "sent", "nothing was sent")
        _wait(lambda: outgoing in _subjects(serving.url, "Sent"), "no Sent copy came back")
        assert [r.rcpt_tos for r in smtp.received()] == [["reader@example.net"]]

        assert _stop(serving) == 0
        assert serving.events("serve.stopped")


def test_serve_without_delivery_leaves_queued_sends_alone(setup: Setup, smtp: SmtpServer) -> None:
    arrived = "Arrived beside a held send " + uuid.uuid4().hex[:6]
    register_all([arrived, "Queued before the server started"])
    config = load_config(setup.config)
    with Services.open(config) as services:
        queued = services.sending().send.send(
            Caller(permissions=ALL_PERMISSIONS, label="local"),
            SendRequest(
                account="work",
                to=["reader@example.net"],
                subject="Queued before the server started",
                plain_text_body="Nobody delivers this.\n",
                idempotency_key="held",
            ),
        )
    with _serve(setup, "--no-deliver") as serving:
        (started,) = serving.events("serve.started")
        assert (started["synchronizing"], started["delivering"]) == (["work"], False)
        # A delivery pass would have taken the send the moment the server started; mail
        # appended afterwards reaching the store shows the server has been running since.
        _append(setup.account, arrived)
        _wait(lambda: arrived in _subjects(serving.url, "INBOX"), "new mail was not synchronized")
        state = _state(serving.url, str(queued.outgoing_id))
        assert (state["state"], state["attemptCount"]) == ("queued", 0)
        assert _stop(serving) == 0
    assert smtp.received() == []


def test_serve_without_synchronization_leaves_the_mailbox_alone(
    setup: Setup, smtp: SmtpServer
) -> None:
    waiting = "Waiting on the server " + uuid.uuid4().hex[:6]
    outgoing = "Sent without synchronizing " + uuid.uuid4().hex[:6]
    register_all([waiting, outgoing])
    _append(setup.account, waiting)
    with _serve(setup, "--no-sync") as serving:
        (started,) = serving.events("serve.started")
        assert (started["synchronizing"], started["delivering"]) == ([], True)
        identifier = _send(serving.url, outgoing)
        # The delivery pass ran first at start and found nothing; this send waits for its
        # next pass, by when a synchronization started with the server would long have
        # stored the message waiting in the inbox.
        _wait(lambda: _state(serving.url, identifier)["state"] == "sent", "nothing was sent")
        _wait(lambda: _server_subjects(setup.account, "Sent") == 1, "no Sent copy was filed")
        assert _subjects(serving.url, "INBOX") == []
        assert _subjects(serving.url, "Sent") == []
        assert _stop(serving) == 0


def test_serve_over_stdio_synchronizes_and_keeps_stdout_for_the_protocol(setup: Setup) -> None:
    arrived = "Arrived during a desktop session " + uuid.uuid4().hex[:6]
    register_all([arrived])
    text = setup.config.read_text("utf-8").replace('SyncMode = "push"', "PollIntervalSeconds = 1")
    setup.config.write_text(text, "utf-8")

    async def work(client: Client) -> list[str]:
        await anyio.to_thread.run_sync(_append, setup.account, arrived)
        with anyio.fail_after(DEADLINE):
            while True:
                result = await client.call_tool(
                    "list_emails", {"accounts": ["work"], "folders": ["INBOX"]}
                )
                subjects = [e["subject"] for e in structured(result)["emails"]]
                if subjects:
                    return subjects
                await anyio.sleep(0.3)

    assert over_stdio(setup.config, setup.env, work, setup.root / "stdio.log") == [arrived]
