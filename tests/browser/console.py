"""The owner's console as an operator runs it, for the browser to use: `mailfathom console
set-password` reads the owner password from standard input, then `mailfathom serve` serves
the console (`[Console] Enabled = true`) beside the MCP endpoint, over a local account in an
SQLite store.

The endpoint admits `agent` (every permission, a person asked before mail leaves) with
`AGENT_KEY`. With an SMTP server the account submits to it and `serve` runs the delivery pass;
without one nothing leaves (`serve --no-deliver`). A test may open the same store in its own
process (`Console.services`), as a second process of the deployment would."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from log_audit import register_all
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.bootstrap import Services
from mcp_tests.deployment import _free_port, _wait_for_port
from sending.helpers import SMTP_PASSWORD
from sending.served import _smtp_block
from servers.smtp import SmtpServer

AGENT_KEY = "key-console-agent-" + uuid.uuid4().hex
ADDRESS = "desk@example.org"
STOP_DEADLINE = 30.0


@dataclass(frozen=True)
class Console:
    origin: str
    password: str
    root: Path
    config: Path
    mcp_url: str
    process: subprocess.Popen[bytes] = field(repr=False)

    def url(self, path: str) -> str:
        return self.origin + path

    @contextmanager
    def services(self) -> Iterator[Services]:
        """The deployment's services opened by this process, over the same store."""
        with Services.open(load_config(self.config)) as services:
            yield services

    def said(self) -> str:
        """What `serve` wrote to its standard output and error so far."""
        return (self.root / "serve.log").read_text("utf-8", "replace")


def _config(root: Path, mcp_port: int, console_port: int, smtp: SmtpServer | None) -> str:
    submission = "" if smtp is None else _smtp_block(smtp)
    digest = hashlib.sha256(AGENT_KEY.encode()).hexdigest()
    return f"""
[Store]
DataDir = "{root / "data"}"

[Sync]
Enabled = false

[MailDelivery]
HoldSeconds = 0

[[Accounts]]
Id = "work"
DisplayName = "Work"
Kind = "local"
Addresses = ["{ADDRESS}"]

[[Accounts.Folders]]
Remote = "INBOX"
Role = "Inbox"

[Accounts.Delivery]
Enabled = true
Address = "{ADDRESS}"
{submission}
[McpEndpoint]
Enabled = true
Listen = "127.0.0.1:{mcp_port}"

[[McpEndpoint.Callers]]
Name = "agent"
Credential = "apiKey"
ApiKeySha256 = "{digest}"
Confirmation = "ask"

[Console]
Enabled = true
Listen = "127.0.0.1:{console_port}"
"""


def _command(*args: str) -> list[str]:
    return [sys.executable, "-m", "mailfathom", *args]


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM, as an operator's service manager stops it; killed only past the deadline."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=STOP_DEADLINE)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextmanager
def served_console(root: Path, smtp: SmtpServer | None = None) -> Iterator[Console]:
    """`mailfathom serve` with the console, an owner password set, until the block ends."""
    password = "owner-" + uuid.uuid4().hex
    register_all([password, AGENT_KEY, ADDRESS])
    root.mkdir(parents=True, exist_ok=True)
    mcp_port, console_port = _free_port(), _free_port()
    config = root / "mailfathom.toml"
    config.write_text(_config(root, mcp_port, console_port, smtp), "utf-8")
    environment = dict(os.environ)
    if smtp is not None:
        environment["MAILFATHOM_TEST_SMTP_SECRET"] = SMTP_PASSWORD
        environment["SSL_CERT_FILE"] = str(smtp.ca_path)
    set_by = subprocess.run(
        _command("console", "set-password", "--config", str(config)),
        cwd=root,
        input=password + "\n",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert set_by.returncode == 0, set_by.stderr
    deliver = "--deliver" if smtp is not None else "--no-deliver"
    with (root / "serve.log").open("wb") as log:
        process = subprocess.Popen(
            _command("serve", "--config", str(config), deliver),
            env=environment,
            cwd=root,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
        )
    try:
        _wait_for_port(mcp_port, process)
        _wait_for_port(console_port, process)
        yield Console(
            f"http://127.0.0.1:{console_port}",
            password,
            root,
            config,
            f"http://127.0.0.1:{mcp_port}/mcp",
            process,
        )
    finally:
        stop(process)
