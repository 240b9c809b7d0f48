"""The MCP server assembled in this process from a deployment's use-case bundles, reached by the
official client through its in-memory connection, in either protocol generation.

Nothing here starts a process: the deployment's mail is local Maildir folders synchronized
into a SQLite store under a temporary directory, prepared in this process, and each caller
entry of the configuration is served by a server of its own, built by `build_server_from` with
that entry as the caller of every session (a session that carries no HTTP request is served as
the caller the server was built for). What only HTTP carries, the bearer key, the categories
header, the 401 and the session bound, is proven by the tests that serve over HTTP, from a
process of their own or from a thread of this one (`served_in_thread`).
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest
import sqlalchemy as sa
import uvicorn
from mcp import Client
from mcp.client.session import ElicitationFnT
from mcp.types import CallToolResult

import log_audit
from log_audit import register_all
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.adapters.preparer import MimeMessagePreparer
from mailfathom.bootstrap import Services
from mailfathom.domain.access import Caller
from mailfathom.domain.config import McpEndpointConfig
from mailfathom.entrypoints.mcp.assemble import ToolBundles, build_server_from
from mailfathom.entrypoints.mcp.http_app import build_http_app, caller_of
from mailfathom.entrypoints.mcp.run import bind
from mailfathom.entrypoints.mcp.server import MailFathomMcp
from mcp_tests.deployment import FOLDERS, SENSITIVE, fill_mail
from servers._common import free_port
from waiting import wait_for

T = TypeVar("T")
# The two protocol generations: the modern one (no session, each call on its own) and the
# handshake one (initialize, then calls within the session).
MODERN = "2026-07-28"
LEGACY = "legacy"
MODES = [MODERN, LEGACY]
# The grants of the served deployment's callers (tests/mcp_tests/deployment.py names the
# same callers, each admitted there by a key of its own).
GRANTS: dict[str, list[str] | None] = {
    "full": None,
    "reader": ["mailfathom.mail.read"],
    "nothing": [],
    "sender": ["mailfathom.mail.send"],
    "reader-sender": ["mailfathom.mail.read", "mailfathom.mail.send"],
    "drafter": ["mailfathom.mail.drafts.write"],
    "drafter-sender": ["mailfathom.mail.drafts.write", "mailfathom.mail.send"],
    "reader-files": ["mailfathom.mail.read", "mailfathom.files.write"],
    "files": ["mailfathom.files.write"],
    "flagger": ["mailfathom.mail.flags.write"],
    "organizer": ["mailfathom.mail.organize"],
    "contacts-reader": ["mailfathom.mail.contacts.read"],
    "contacts-writer": ["mailfathom.mail.contacts.write"],
    "contacts": ["mailfathom.mail.contacts.read", "mailfathom.mail.contacts.write"],
}


@dataclass
class InProcess:
    """A deployment's store and one in-process server per caller entry."""

    services: Services
    root: Path
    _servers: dict[str, MailFathomMcp] = field(default_factory=dict)
    _bundles: ToolBundles | None = None

    @property
    def data_dir(self) -> Path:
        return self.services.config.store.data_dir

    @property
    def files_dir(self) -> Path:
        """The directory `MailDelivery.AttachmentRoots` allows."""
        return self.root / "files"

    def rows(self, query: str, **parameters: Any) -> list[tuple[Any, ...]]:
        """What `query` reads from the store, through the deployment's own engine: another
        SQLite library opening the file in this process would see a stale copy of it."""
        with self.services.engine.connect() as connection:
            return [tuple(r) for r in connection.execute(sa.text(query), parameters)]

    def caller(self, name: str) -> Caller:
        (entry,) = [e for e in self.services.config.mcp.callers if e.name == name]
        return caller_of(entry)

    def server(self, name: str) -> MailFathomMcp:
        """The server a session of the caller entry `name` is served by."""
        if name not in self._servers:
            if self._bundles is None:
                self._bundles = ToolBundles.of(self.services)
            config = self.services.config.mcp
            self._servers[name] = build_server_from(self._bundles, config, self.caller(name))
        return self._servers[name]

    def session(
        self,
        name: str,
        work: Callable[[Client], Awaitable[T]],
        *,
        mode: str = MODERN,
        elicitation: ElicitationFnT | None = None,
    ) -> T:
        """`work` done with the official client connected in memory, as the caller `name`."""

        async def run() -> T:
            client = Client(self.server(name), mode=mode, elicitation_callback=elicitation)
            async with client:
                return await work(client)

        return anyio.run(run)

    def call(
        self, name: str, tool: str, arguments: dict[str, Any] | None = None, *, mode: str = MODERN
    ) -> CallToolResult:
        async def work(client: Client) -> CallToolResult:
            return await client.call_tool(tool, arguments or {})

        return self.session(name, work, mode=mode)

    def calls(
        self, name: str, *calls: tuple[str, dict[str, Any]], mode: str = MODERN
    ) -> list[CallToolResult]:
        """Each call in turn, in one session."""

        async def work(client: Client) -> list[CallToolResult]:
            return [await client.call_tool(tool, arguments) for tool, arguments in calls]

        return self.session(name, work, mode=mode)

    def tool_names(self, name: str, *, mode: str = MODERN) -> list[str]:
        async def work(client: Client) -> list[str]:
            return [t.name for t in (await client.list_tools()).tools]

        return self.session(name, work, mode=mode)

    def synchronize(self) -> None:
        for account in self.services.config.accounts:
            self.services.account_synchronizer().run_once(account)


def one_reader_config(root: Path, key_sha256: str) -> str:
    """A deployment of one local account and one caller, `reader`, who may read mail with
    the API key whose SHA-256 is `key_sha256`."""
    return f"""
[Store]
DataDir = "{root / "data"}"

[[Accounts]]
Id = "work"
Kind = "local"

[[Accounts.Folders]]
Remote = "INBOX"
Role = "Inbox"

[McpEndpoint]
Enabled = true
Listen = "127.0.0.1:8625"

[[McpEndpoint.Callers]]
Name = "reader"
Credential = "apiKey"
ApiKeySha256 = "{key_sha256}"
Permissions = ["mailfathom.mail.read"]
"""


@contextmanager
def in_process(
    root: Path, config_text: str, fill: Callable[[Services], None] | None = None
) -> Iterator[InProcess]:
    """The deployment `config_text` describes under `root`, its local folders filled by
    `fill` (from the opened services, before the first synchronization) and synchronized."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "files").mkdir(exist_ok=True)
    config_path = root / "mailfathom.toml"
    config_path.write_text(config_text, "utf-8")
    services = Services.open(load_config(config_path))
    # Everything is prepared in this process: a pool of worker processes, which a first
    # synchronization of a few dozen messages would start, is the process tier's to try.
    services.preparer.close()
    services.preparer = MimeMessagePreparer(services.config.store.content_dir, workers=0)
    try:
        if fill is not None:
            fill(services)
        deployment = InProcess(services, root)
        deployment.synchronize()
        yield deployment
    finally:
        services.close()


def _log_copy() -> Path:
    path = log_audit.copy_path()
    assert path is not None, "the run keeps no copy of its log"
    return path


def log_mark() -> int:
    """Where the run's log copy ends now (tests/conftest.py keeps it)."""
    return _log_copy().stat().st_size


def logged_since(mark: int, calls: int = 1) -> str:
    """What was logged after `mark`, once that holds `calls` tool calls."""

    def logged() -> str | None:
        log = _log_copy().read_bytes()[mark:].decode("utf-8", "replace")
        return log if log.count('"tool.call"') >= calls else None

    return wait_for(logged, "the calls were not logged", timeout=20)


@contextmanager
def served_in_thread(server: MailFathomMcp, config: McpEndpointConfig) -> Iterator[str]:
    """The URL of `server` while a thread of this process serves it over Streamable HTTP
    as `mailfathom serve` does (`config` admits the callers), on a free loopback port."""
    listener = bind("127.0.0.1", free_port())
    uvicorn_server = uvicorn.Server(
        uvicorn.Config(
            build_http_app(server, config), log_level="warning", access_log=False, lifespan="on"
        )
    )
    thread = threading.Thread(
        target=lambda: anyio.run(uvicorn_server.serve, [listener]), daemon=True
    )
    thread.start()
    try:
        wait_for(lambda: uvicorn_server.started, "the in-process MCP server started", timeout=30)
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"
    finally:
        uvicorn_server.should_exit = True
        thread.join(timeout=30)
        listener.close()


def caller_entries(grants: Mapping[str, list[str] | None], **more: str) -> str:
    """`[[McpEndpoint.Callers]]` entries with the given grants (None: every permission),
    each admitted over HTTP by a key nobody holds; `more` adds lines to an entry by name."""
    entries = []
    for name, permissions in grants.items():
        lines = [f'Name = "{name}"', 'Credential = "apiKey"', f'ApiKeySha256 = "{"0" * 64}"']
        if permissions is not None:
            lines.append("Permissions = [" + ", ".join(f'"{p}"' for p in permissions) + "]")
        if name in more:
            lines.append(more[name])
        entries.append("[[McpEndpoint.Callers]]\n" + "\n".join(lines) + "\n")
    return "\n".join(entries)


def _mailbox_config(root: Path) -> str:
    return f"""
[Store]
DataDir = "{root / "data"}"

[MailDelivery]
AttachmentRoots = ["{root / "files"}"]

[[Accounts]]
Id = "work"
DisplayName = "Work Mail"
Kind = "local"
Addresses = ["owner@example.net"]

{FOLDERS}
[McpEndpoint]
Enabled = true
Listen = "127.0.0.1:8625"

{caller_entries(GRANTS)}
"""


# How a Maildir file name holds the IMAP flags the deployment's mail carries; a Maildir
# holds no keywords.
_MAILDIR_FLAGS = {"\\Flagged": "F", "\\Seen": "S"}


def _fill_mailbox(services: Services) -> None:
    """The mail of tests/mcp_tests/deployment.py, in the same local folders."""

    def put(folder: str, raw: bytes, flags: str, sent: datetime) -> None:
        letters = "".join(_MAILDIR_FLAGS.get(f, "") for f in flags.split())
        services.connectors.local.folder("work", folder).deliver(raw, letters, received_at=sent)

    fill_mail(put)


@pytest.fixture(scope="module")
def mailbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcess]:
    """The mail of the served deployment in tests/mcp_tests/deployment.py, and its callers,
    served in this process."""
    register_all(SENSITIVE)
    root = tmp_path_factory.mktemp("in-process")
    with in_process(root, _mailbox_config(root), _fill_mailbox) as deployment:
        yield deployment
