"""A local Maildir account synchronized into a fresh store, and its MCP endpoint served over
Streamable HTTP in this process, so that a test can lower a published ceiling of the module
that enforces it and watch a real client meet it."""

from __future__ import annotations

import hashlib
import os
import socket
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from log_audit import register_headers
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.app.shared.stored_mail import SummaryFilter, SummaryRow
from mailfathom.bootstrap import Services
from mailfathom.entrypoints.mcp.assemble import build_server
from mcp_tests.in_process import served_in_thread

ACCOUNT = "patterns"
KEY = "key-patterns-" + hashlib.sha256(os.urandom(16)).hexdigest()[:24]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def write_mailbox(root: Path, messages: Sequence[bytes]) -> Path:
    """A config for one local account whose INBOX holds `messages` (the first the oldest),
    under `root`; nothing is synchronized yet."""
    data = root / "data"
    inbox = data / "local" / ACCOUNT / "INBOX"
    for sub in ("cur", "new", "tmp"):
        (inbox / sub).mkdir(parents=True, exist_ok=True)
    for n, raw in enumerate(messages, start=1):
        (inbox / "cur" / f"{1_200_000_000 + n}.M{n}.patterns:2,S").write_bytes(raw)
    digest = hashlib.sha256(KEY.encode()).hexdigest()
    config = root / "mailfathom.toml"
    config.write_text(
        f'[Store]\nDataDir = "{data}"\n\n[[Accounts]]\nId = "{ACCOUNT}"\n'
        'DisplayName = "Pattern mailbox"\nKind = "local"\nAddresses = ["owner@example.org"]\n'
        '\n[[Accounts.Folders]]\nRemote = "INBOX"\nAlias = "INBOX"\nRole = "Inbox"\n'
        f'\n[McpEndpoint]\nEnabled = true\nListen = "127.0.0.1:{_free_port()}"\n\n'
        '[[McpEndpoint.Callers]]\nName = "agent"\nCredential = "apiKey"\n'
        f'ApiKeySha256 = "{digest}"\n',
        "utf-8",
    )
    return config


@contextmanager
def synchronized(config: Path) -> Iterator[Services]:
    loaded = load_config(config)
    with Services.open(loaded) as services:
        services.account_synchronizer().run_once(loaded.accounts[0])
        yield services


@contextmanager
def corpus_mailbox(corpus: Path, count: int, root: Path) -> Iterator[Services]:
    """The first `count` messages of a corpus directory (in name order, an mbox "From "
    line taken off), synchronized into the account's INBOX under `root`."""
    raws = []
    for path in sorted(corpus.iterdir())[:count]:
        raw = path.read_bytes()
        if raw.startswith(b"From "):
            raw = raw.split(b"\n", 1)[1]
        register_headers(raw)
        raws.append(raw)
    with synchronized(write_mailbox(root, raws)) as services:
        yield services


def stored_texts(services: Services) -> tuple[list[SummaryRow], dict[int, str]]:
    """Every email of the account, newest first, and the indexed body text of each (by its
    row's `seq`), read back from the store as the filters read it."""
    reader = services._reader()
    folder_ids = tuple(f.folder_id for f in reader.readable_folders([ACCOUNT]))
    with reader.snapshot() as view:
        rows = view.summaries(
            SummaryFilter(folder_ids=folder_ids), newest_first=True, after=None, limit=2000
        )
        return rows, view.indexed_texts([r.seq for r in rows], folder_ids)


@contextmanager
def served_over_http(services: Services) -> Iterator[str]:
    """The MCP endpoint's URL while it serves from a thread of this process."""
    with served_in_thread(build_server(services), services.config.mcp) as url:
        yield url
