"""A running `mailfathom serve` on PostgreSQL keeps the visible folders between calls; a
folder that another process's synchronization adds or withholds is in, or out of, the very
next call, and the first call after the database restarted is answered.

The served process does not synchronize (`[Sync] Enabled = false`): each change is made by a
`mailfathom sync` run of its own, on a configuration that maps one folder more or less."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from mcp_tests.client import call, structured
from mcp_tests.deployment import _free_port, _wait_for_port
from servers._common import terminate
from servers.postgres import PostgresServer

KEY = "key-folders-" + uuid.uuid4().hex
FOLDERS = {"INBOX": "Inbox", "Archive": "Archive"}

pytestmark = pytest.mark.postgres


def _config(data: Path, url: str, port: int, folders: list[str], *, serving: bool = False) -> str:
    """`serving`: the served process's, which does not synchronize."""
    mapped = "".join(
        f'\n[[Accounts.Folders]]\nRemote = "{name}"\nAlias = "{name}"\nRole = "{FOLDERS[name]}"\n'
        for name in folders
    )
    digest = hashlib.sha256(KEY.encode()).hexdigest()
    return (
        f'[Store]\nDataDir = "{data}"\nDatabaseUrl = "{url}"\n\n'
        f"[Sync]\nEnabled = {'false' if serving else 'true'}\n\n"
        '[[Accounts]]\nId = "desk"\nDisplayName = "Desk"\nKind = "local"\n'
        f'Addresses = ["desk@example.org"]\n{mapped}\n'
        f'[McpEndpoint]\nEnabled = true\nListen = "127.0.0.1:{port}"\n\n'
        '[[McpEndpoint.Callers]]\nName = "agent"\nCredential = "apiKey"\n'
        f'ApiKeySha256 = "{digest}"\nPermissions = ["mailfathom.mail.read"]\n'
    )


def _maildir(data: Path) -> None:
    for name in FOLDERS:
        for sub in ("cur", "new", "tmp"):
            (data / "local" / "desk" / name / sub).mkdir(parents=True, exist_ok=True)


def _sync(config: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mailfathom", "-q", "sync", "--config", str(config)],
        capture_output=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]


@contextmanager
def _served(config: Path, port: int, log: Path) -> Iterator[str]:
    argv = [sys.executable, "-m", "mailfathom", "serve", "--config", str(config)]
    with log.open("wb") as out:
        process = subprocess.Popen(
            argv, env=dict(os.environ), stdout=out, stderr=out, start_new_session=True
        )
    try:
        _wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        terminate(process, grace=30)


def _aliases(url: str) -> list[str]:
    (account,) = structured(call(url, KEY, "list_accounts"))["accounts"]
    return sorted(f["alias"] for f in account["folders"])


def _covered(url: str, **arguments: Any) -> list[str]:
    found = structured(call(url, KEY, "list_emails", {"accounts": ["desk"], **arguments}))
    return sorted(f["alias"] for f in found["folderFreshness"])


def test_another_process_s_sync_shows_and_withholds_a_folder_for_the_next_call(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    _maildir(data)
    port = _free_port()
    served_config = tmp_path / "serve.toml"
    inbox_only = tmp_path / "inbox.toml"
    both = tmp_path / "both.toml"
    with PostgresServer() as database:
        url = database.create_database("folders")
        served_config.write_text(_config(data, url, port, ["INBOX"], serving=True), "utf-8")
        inbox_only.write_text(_config(data, url, port, ["INBOX"]), "utf-8")
        both.write_text(_config(data, url, port, ["INBOX", "Archive"]), "utf-8")
        _sync(inbox_only)
        with _served(served_config, port, tmp_path / "serve.log") as mcp:
            assert _aliases(mcp) == _covered(mcp) == ["INBOX"]
            assert _aliases(mcp) == ["INBOX"]

            _sync(both)
            assert _aliases(mcp) == _covered(mcp) == ["Archive", "INBOX"]
            assert _covered(mcp, folders=["Archive"]) == ["Archive"]

            _sync(inbox_only)
            assert _aliases(mcp) == _covered(mcp) == ["INBOX"]
            assert _covered(mcp, folders=["Archive", "INBOX"]) == ["INBOX"]


def test_the_first_call_after_the_database_restarted_is_answered(tmp_path: Path) -> None:
    data = tmp_path / "data"
    _maildir(data)
    port = _free_port()
    config = tmp_path / "sync.toml"
    served_config = tmp_path / "serve.toml"
    with PostgresServer() as database:
        url = database.create_database("restart")
        config.write_text(_config(data, url, port, ["INBOX"]), "utf-8")
        served_config.write_text(_config(data, url, port, ["INBOX"], serving=True), "utf-8")
        _sync(config)
        with _served(served_config, port, tmp_path / "serve.log") as mcp:
            assert _aliases(mcp) == _covered(mcp) == ["INBOX"]
            database.halt()
            database.resume()
            assert _covered(mcp) == ["INBOX"]
            assert _aliases(mcp) == ["INBOX"]
