"""Shared pytest configuration: real-server and corpus fixtures for every test."""

from __future__ import annotations

import pytest

from servers.fixtures import add_fixture_markers
from servers.fixtures import corpora as corpora
from servers.fixtures import dovecot as dovecot
from servers.fixtures import imap_account as imap_account
from servers.fixtures import postgres_server as postgres_server
from servers.fixtures import postgres_url as postgres_url


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    add_fixture_markers(items)
