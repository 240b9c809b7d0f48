"""A deployment whose mail is verified for real: messages signed in the test by keys it
generates, appended to Dovecot, synchronized by `mailfathom sync` with its key lookups sent to
the loopback DNS server, and read back from `mailfathom serve` with the official MCP client
over HTTP."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cli.operator_cli import EXIT_DEADLINE, Finished
from log_audit import register_headers
from mcp_tests.client import call, structured
from mcp_tests.deployment import _free_port, _wait_for_port
from servers.dns import DnsServer
from servers.dovecot import DovecotServer, ImapAccount
from sync.helpers import RemoteMailbox

KEY = "key-verdicts-" + uuid.uuid4().hex


@dataclass(frozen=True)
class Served:
    url: str
    config_path: Path
    env: dict[str, str]
    root: Path

    @property
    def server_log(self) -> Path:
        return self.root / "server.log"

    def call(self, tool: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        return structured(call(self.url, KEY, tool, dict(arguments)))

    def listed(self) -> dict[str, dict[str, Any]]:
        """Every summary list_emails publishes, by subject."""
        page = self.call("list_emails", {"pageSize": 100})
        assert page["nextCursor"] is None
        return {e["subject"]: e for e in page["emails"]}

    def contents(self, ids: list[str]) -> list[dict[str, Any]]:
        """Each email's content, read ten to a call (a content read's bound)."""
        entries: list[dict[str, Any]] = []
        for start in range(0, len(ids), 10):
            read = self.call("get_email_content", {"storedEmailIds": ids[start : start + 10]})
            entries.extend(read["emails"])
        assert [e["failure"] for e in entries] == [None] * len(ids)
        return [e["content"] for e in entries]

    def run(self, *args: str) -> Finished:
        """A command of this deployment as an operator runs it, to its end."""
        process = subprocess.Popen(
            [sys.executable, "-m", "mailfathom", *args, "--config", str(self.config_path)],
            cwd=self.root,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            stdout, stderr = process.communicate(timeout=EXIT_DEADLINE * 2)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            raise
        return Finished(process.returncode, stdout, stderr)


def config_text(
    account: ImapAccount,
    secret_env: str,
    root: Path,
    dns: DnsServer,
    *,
    account_keys: str = "",
    sections: str = "",
    readings: bool = True,
) -> str:
    """One IMAP account, its INBOX, key lookups sent to `dns`, one keyed caller; `account_keys`
    go into the account's table and `sections` after everything; `readings` False switches
    sender verification and machine authorship off."""
    digest = hashlib.sha256(KEY.encode()).hexdigest()
    return f"""
[Store]
DataDir = "{root / "data"}"

[[Accounts]]
Id = "work"
DisplayName = "Work Mail"
Kind = "imap"
Addresses = ["owner@example.net"]
{account_keys}

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
Name = "full"
Credential = "apiKey"
ApiKeySha256 = "{digest}"

{sections}
[MachineAuthorship]
Enabled = {str(readings).lower()}

[SenderVerification]
Enabled = {str(readings).lower()}
Resolver = "{dns.host}:{dns.port}"
LookupTimeoutSeconds = 2
"""


def append_all(account: ImapAccount, messages: Mapping[str, bytes]) -> None:
    mailbox = RemoteMailbox(account)
    try:
        for raw in messages.values():
            register_headers(raw)
            mailbox.append(raw, folder="INBOX")
    finally:
        mailbox.close()


@contextmanager
def served(
    dovecot: DovecotServer,
    root: Path,
    dns: DnsServer,
    messages: Mapping[str, bytes],
    *,
    account_keys: str = "",
    sections: str = "",
    readings: bool = True,
) -> Iterator[Served]:
    """The messages in a Dovecot user's INBOX, synchronized by `mailfathom sync` (one pass,
    its own process) and served by `mailfathom serve`; `readings` as in `config_text`."""
    suffix = uuid.uuid4().hex[:10]
    account = dovecot.add_user(f"verdicts-{suffix}", f"pw-{suffix}")
    append_all(account, messages)
    secret_env = f"MF_VERDICTS_SECRET_{suffix.upper()}"
    env = {**os.environ, secret_env: account.password}
    config_path = root / "mailfathom.toml"
    config_path.write_text(
        config_text(
            account,
            secret_env,
            root,
            dns,
            account_keys=account_keys,
            sections=sections,
            readings=readings,
        ),
        "utf-8",
    )
    port = _free_port()
    deployment = Served(f"http://127.0.0.1:{port}/mcp", config_path, env, root)
    synced = deployment.run("sync")
    assert synced.returncode == 0, synced.stderr
    with serving(deployment, port):
        yield deployment


@contextmanager
def serving(deployment: Served, port: int) -> Iterator[None]:
    """`mailfathom serve --no-sync` over the deployment's configuration on `port`, its
    output in the deployment's server log, until the block ends."""
    with deployment.server_log.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "mailfathom", "serve", "--no-sync", "--config",
             str(deployment.config_path), "--port", str(port)],
            env=deployment.env,
            stdout=log,
            stderr=log,
        )  # fmt: skip
    try:
        _wait_for_port(port, process)
        yield
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
