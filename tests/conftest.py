"""Shared pytest configuration: real-server and corpus fixtures for every test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import log_audit
from browser.markers import add_browser_markers
from parallel import own_log_copy
from processes import ProcessGuard, mark_process_tests
from servers.fixtures import add_fixture_markers
from servers.fixtures import corpora as corpora
from servers.fixtures import dovecot as dovecot
from servers.fixtures import imap_account as imap_account
from servers.fixtures import migrated_postgres_template as migrated_postgres_template
from servers.fixtures import migrated_postgres_url as migrated_postgres_url
from servers.fixtures import model_provider as model_provider
from servers.fixtures import oauth_dovecot as oauth_dovecot
from servers.fixtures import oauth_imap_account as oauth_imap_account
from servers.fixtures import oauth_server as oauth_server
from servers.fixtures import oauth_smtp as oauth_smtp
from servers.fixtures import object_store as object_store
from servers.fixtures import partitioned_postgres_template as partitioned_postgres_template
from servers.fixtures import partitioned_postgres_url as partitioned_postgres_url
from servers.fixtures import postgres_server as postgres_server
from servers.fixtures import postgres_url as postgres_url
from servers.fixtures import provider as provider
from servers.fixtures import s3_server as s3_server

# The browser fixtures (`browser`, `page`, `new_page`, `screenshots`, `axe`) and the hooks that
# keep a failed test's screenshot and list every screenshot at the end.
pytest_plugins = ["browser.fixtures"]


def pytest_configure(config: pytest.Config) -> None:
    """Copy every log line of this run, in-process and from started processes, to one file,
    and fail a test that starts a process without saying so (tests/processes.py).

    Each xdist worker copies to a file of its own: the audit answers for the lines of the
    tests it ran, never for those of another worker's."""
    own_log_copy()
    from mailfathom.entrypoints import logs

    logs.configure(json=True)
    guard = ProcessGuard()
    guard.install()
    config.pluginmanager.register(guard, "mailfathom-process-guard")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--reverse-order",
        action="store_true",
        help="Run the collected tests in reverse order (each must pass in any order).",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    add_fixture_markers(items)
    add_browser_markers(items)
    mark_process_tests(items)
    if config.getoption("--reverse-order"):
        items.reverse()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """After each test and its fixtures' teardown, audit the log lines written since the
    previous test finished: a failure here names the test that logged mail content."""
    yield
    log_audit.audit_new_lines()
