"""Shared pytest configuration: real-server and corpus fixtures for every test."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from servers.fixtures import add_fixture_markers
from servers.fixtures import corpora as corpora
from servers.fixtures import dovecot as dovecot
from servers.fixtures import imap_account as imap_account
from servers.fixtures import postgres_server as postgres_server
from servers.fixtures import postgres_url as postgres_url


def pytest_configure(config: pytest.Config) -> None:
    """Copy every log line of this run, in-process and from started processes, to one file."""
    if "MAILFATHOM_LOG_COPY" not in os.environ:
        handle, path = tempfile.mkstemp(prefix="mailfathom-test-logs-", suffix=".log")
        os.close(handle)
        os.environ["MAILFATHOM_LOG_COPY"] = path
    from mailfathom.entrypoints import logs

    logs.configure(json=True)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    add_fixture_markers(items)
    # The log audit reads what every other test logged, so it runs last.
    audit = [i for i in items if Path(str(i.fspath)).name == "test_log_audit.py"]
    items[:] = [i for i in items if i not in audit] + audit
