"""The console's health page over a real Dovecot account, on SQLite and PostgreSQL: a folder
synchronized is shown fresh with no failure; the server refusing the login shows 31002 for
the account and a mapped folder deleted on the server shows 31006 for that folder; once the
password is right again and the folder is back, a pass clears both."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import lxml.html
import pytest
from starlette.testclient import TestClient

import log_audit
from mailfathom.adapters.sql.sync_failures import SqlSyncFailures
from mailfathom.bootstrap import Services
from mailfathom.domain.config import AccountConfig, FolderMapping
from mailfathom.domain.errors import MailServerAuthError
from mailfathom.domain.folders import FolderRole
from mailfathom.entrypoints.console.pages import build_console_app
from mailfathom.entrypoints.console.serving import console_use_cases
from servers.dovecot import DovecotServer, ImapAccount
from sync.conftest import database_url  # noqa: F401  (the fixture, for both stores)
from sync.helpers import imap_account_config, open_services, sample

from .conftest import ORIGIN, PASSWORD, Clock, Console

FOLDERS = (
    FolderMapping("INBOX", "INBOX", FolderRole.INBOX),
    FolderMapping("Projects", "Projects"),
)


@pytest.fixture
def account(imap_account: ImapAccount, dovecot: DovecotServer) -> AccountConfig:
    dovecot.create_folder(imap_account.username, "Projects")
    dovecot.save_message(imap_account.username, sample("Fresh mail"))
    return imap_account_config(imap_account, folders=FOLDERS)


@pytest.fixture
def console(
    tmp_path: Path,
    account: AccountConfig,
    database_url: str | None,  # noqa: F811
) -> Iterator[Console]:
    log_audit.register(PASSWORD)
    with open_services(tmp_path, account, database_url) as services:
        services.console_access().set_password(PASSWORD)
        app = build_console_app(console_use_cases(services), "127.0.0.1")
        with TestClient(app, base_url=ORIGIN) as client:
            console = Console(client, services, Clock())
            assert console.sign_in().status_code == 303
            yield console


def _page(console: Console, account: AccountConfig) -> lxml.html.HtmlElement:
    answer = console.client.get("/health")
    assert answer.status_code == 200
    tree = lxml.html.fromstring(answer.text)
    (section,) = tree.xpath(f'//section[@id="account-{account.account_id}"]')
    return section


def _folder_cell(section: lxml.html.HtmlElement, alias: str, column: str) -> str:
    (cell,) = section.xpath(f'.//tr[@data-alias="{alias}"]/td[@class="{column}"]')
    return " ".join(cell.text_content().split())


def _account_failure(section: lxml.html.HtmlElement) -> str:
    (cell,) = section.xpath('.//dd[@class="account-failure"]')
    return " ".join(cell.text_content().split())


def _pass(services: Services, account: AccountConfig) -> None:
    services.account_synchronizer().run_once(account)


def test_failures_over_dovecot_are_shown_by_code_and_cleared_by_a_pass(
    console: Console, account: AccountConfig, imap_account: ImapAccount, dovecot: DovecotServer
) -> None:
    services = console.services
    _pass(services, account)
    section = _page(console, account)
    assert section.get("data-state") == "healthy"
    for alias in ("INBOX", "Projects"):
        assert _folder_cell(section, alias, "progress").endswith("s ago)")
        assert _folder_cell(section, alias, "failure") == "none"
    assert _account_failure(section) == "none"

    assert account.imap is not None
    assert account.imap.secret is not None
    variable = account.imap.secret.env
    assert variable is not None
    os.environ[variable] = "not-the-password"
    with pytest.raises(MailServerAuthError):
        _pass(services, account)
    section = _page(console, account)
    assert _account_failure(section).startswith("31002 the server refused the login at ")
    assert section.get("data-state") == "credentials_refused"

    os.environ[variable] = imap_account.password
    dovecot.doveadm("mailbox", "delete", "-u", imap_account.username, "Projects")
    _pass(services, account)
    section = _page(console, account)
    assert _account_failure(section) == "none"
    assert section.get("data-state") == "healthy"
    assert _folder_cell(section, "Projects", "failure").startswith(
        "31006 the folder is not on the server at "
    )
    assert _folder_cell(section, "INBOX", "failure") == "none"
    kept = SqlSyncFailures(services.engine).failures()
    assert [(f.folder_id is None, f.code) for f in kept] == [(False, 31006)]

    dovecot.create_folder(imap_account.username, "Projects")
    _pass(services, account)
    section = _page(console, account)
    assert _folder_cell(section, "Projects", "failure") == "none"
    assert SqlSyncFailures(services.engine).failures() == []
