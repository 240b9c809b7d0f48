"""The synchronizing process's cyclic garbage collector: start-up objects frozen out of full
collections, young collections less often, and both set once per process. `serve` synchronizes
too unless told not to; a process that only serves the tools (`serve --no-sync`) keeps the
interpreter's own settings."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from log_audit import register
from mailfathom import bootstrap
from mailfathom.adapters.local.maildir import LocalConnector
from mailfathom.domain.config import AccountConfig, AccountKind, DeploymentConfig, StoreConfig

PROBE = Path(__file__).with_name("collector_probe.py")
SUBJECTS = [f"Collector probe letter {n}" for n in range(3)]


def test_a_synchronizer_settles_the_collector_once(tmp_path: Path) -> None:
    account = AccountConfig(
        account_id="first", display_name="first", kind=AccountKind.LOCAL, folders=()
    )
    config = DeploymentConfig(store=StoreConfig(data_dir=tmp_path), accounts=(account,))
    with bootstrap.Services.open(config) as services:
        services.account_synchronizer()
        assert gc.get_threshold()[0] == bootstrap.COLLECTOR_THRESHOLD
        frozen = gc.get_freeze_count()
        assert frozen > 0
        services.account_synchronizer()
        assert gc.get_freeze_count() == frozen  # nothing frozen again: settled once
    gc.collect()  # and collection still works for what is not frozen
    assert gc.isenabled()


def _local_account(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    inbox = LocalConnector(data).folder("notes", "INBOX")
    for subject in SUBJECTS:
        message = EmailMessage()
        message["From"] = "Probe Sender <probe.sender@example.org>"
        message["To"] = "probe.owner@example.org"
        message["Subject"] = subject
        message.set_content("Nothing to see in this collector probe letter.\n")
        register(subject, "probe.sender@example.org", "probe.owner@example.org")
        inbox.deliver(bytes(message))
    config = tmp_path / "mailfathom.toml"
    config.write_text(
        f'[Store]\nDataDir = "{data}"\n\n[[Accounts]]\nId = "notes"\nKind = "local"\n'
        'Addresses = ["probe.owner@example.org"]\n\n'
        '[[Accounts.Folders]]\nRemote = "INBOX"\nRole = "Inbox"\n',
        "utf-8",
    )
    return config


def _settings(report: Path) -> tuple[dict[str, int], dict[str, int]]:
    """The collector's settings before and after the probed command."""
    settings = json.loads(report.read_text("utf-8"))
    return settings["before"], settings["after"]


def test_the_sync_command_settles_the_collector(tmp_path: Path) -> None:
    config = _local_account(tmp_path)
    report = tmp_path / "sync.json"
    done = subprocess.run(
        [sys.executable, str(PROBE), str(report), "sync", "--config", str(config)],
        capture_output=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    before, after = _settings(report)
    assert before["threshold"] != bootstrap.COLLECTOR_THRESHOLD
    assert after["threshold"] == bootstrap.COLLECTOR_THRESHOLD
    assert after["frozen"] > before["frozen"]


def test_serving_without_synchronizing_keeps_the_interpreters_collector_settings(
    tmp_path: Path,
) -> None:
    config = _local_account(tmp_path)
    synced = subprocess.run(
        [sys.executable, "-m", "mailfathom", "sync", "--config", str(config)],
        capture_output=True,
        timeout=300,
        check=False,
    )
    assert synced.returncode == 0, synced.stderr
    report = tmp_path / "serve.json"
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            str(PROBE),
            str(report),
            "serve",
            "--stdio",
            "--no-sync",
            "--no-deliver",
            "--config",
            str(config),
        ],
    )

    async def read_everything() -> list[dict[str, Any]]:
        with (tmp_path / "serve.log").open("a") as log:
            async with Client(stdio_client(params, errlog=log)) as client:
                listed = await client.call_tool("list_emails", {"pageSize": 10})
                assert not listed.is_error
                assert isinstance(listed.structured_content, dict)
                emails: list[dict[str, Any]] = listed.structured_content["emails"]
                ids = [e["storedEmailId"] for e in emails]
                read = await client.call_tool("get_email_content", {"storedEmailIds": ids})
                assert not read.is_error
                found = await client.call_tool("search_emails", {"queryText": "collector"})
                assert not found.is_error
                return emails

    emails = anyio.run(read_everything)
    assert len(emails) == len(SUBJECTS)
    before, after = _settings(report)
    assert before["threshold"] != bootstrap.COLLECTOR_THRESHOLD
    assert after == before
