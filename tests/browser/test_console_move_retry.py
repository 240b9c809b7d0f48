"""A dead-lettered move retried in the owner's console, in Chromium, over the test Dovecot:
an agent files a message into a folder the owner deleted on the server before the move was
carried out, so the next synchronization run dead-letters it (the folder is gone); the
owner creates the folder again, retries the move on /mutations, and the next run moves the
message, as a second IMAP client then finds it (SELECT and UID SEARCH): gone from the inbox,
in the folder, and still the same email to the tools. The page is checked by axe and on a
phone.

The console runs in this process over the same Services the test drives the runs with
(browser/test_console_outbox.py), so each run happens exactly when the test means it to."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page

from browser.axe_core import Violation
from browser.chromium import PHONE
from browser.fixtures import Screenshots
from browser.test_console_outbox import fits_a_phone, served, sign_in
from mailfathom.app.organize.organize_email import OrganizeRequest
from mailfathom.domain.access import ALL_PERMISSIONS, Caller
from mailfathom.domain.config import FolderMapping
from mailfathom.domain.folders import FolderRole
from mailfathom.domain.mutations import (
    MutationFailure,
    MutationKind,
    MutationState,
)
from servers.dovecot import ImapAccount
from sync.helpers import RemoteMailbox, imap_account_config, open_services, sample, stored_rows

Axe = Callable[[Page], list[Violation]]
AGENT = Caller(ALL_PERMISSIONS, "agent")
SUBJECT = "Filed by an agent"
FOLDERS = (
    FolderMapping("INBOX", "INBOX", FolderRole.INBOX),
    FolderMapping("Projects", "Projects"),
)


class Mailbox(RemoteMailbox):
    def holding(self, folder: str, subject: str) -> list[int]:
        """UIDs of `folder` whose Subject holds `subject`, by SELECT and UID SEARCH."""
        typ, _ = self.conn.select(folder, readonly=True)
        assert typ == "OK", folder
        typ, data = self.conn.uid("SEARCH", "HEADER", "Subject", f'"{subject}"')
        assert typ == "OK"
        return [int(uid) for uid in data[0].split()]

    def folder(self, command: str, name: str) -> None:
        typ, data = getattr(self.conn, command)(name)
        assert typ == "OK", data


@pytest.fixture
def remote(imap_account: ImapAccount) -> Iterator[Mailbox]:
    mailbox = Mailbox(imap_account)
    mailbox.folder("create", "Projects")
    yield mailbox
    mailbox.close()


def test_a_dead_lettered_move_retried_in_the_console_reaches_dovecot(
    page: Page,
    new_page: Callable[..., Page],
    tmp_path: Path,
    imap_account: ImapAccount,
    remote: Mailbox,
    screenshots: Screenshots,
    axe: Axe,
) -> None:
    remote.append(sample(SUBJECT))
    account = imap_account_config(imap_account, FOLDERS)
    with open_services(tmp_path, account) as services:
        sync = services.account_synchronizer()
        sync.run_once(account)
        (row,) = stored_rows(services, account.account_id)
        moved = services.organizer().organize(
            AGENT,
            OrganizeRequest(
                action="move", stored_email_ids=[str(row.stored_email_id)], folder="Projects"
            ),
        )
        (entry,) = moved.changed
        record = entry.record
        assert record.kind is MutationKind.MOVE
        remote.folder("delete", "Projects")

        # The run finds the destination gone from the server and ends the record at once.
        sync.run_once(account)
        dead = services.mutations().find(record.record_id)
        assert dead is not None
        assert dead.state is MutationState.DEAD_LETTERED
        assert dead.last_error_code == int(MutationFailure.FOLDER_GONE)
        assert remote.holding("INBOX", SUBJECT) != []

        remote.folder("create", "Projects")
        assert remote.holding("Projects", SUBJECT) == []
        with served(services) as (origin, password):
            sign_in(page, origin, password)
            page.goto(origin + "/mutations")
            shown = page.locator(f"#change-{record.record_id}")
            assert shown.get_attribute("data-state") == "dead-lettered"
            assert "(move)" in shown.locator("th").inner_text()
            assert "to Projects" in shown.inner_text()
            assert shown.locator(".code").inner_text() == str(int(MutationFailure.FOLDER_GONE))
            screenshots.take(page, "dead-lettered move")
            axe(page)
            with page.expect_navigation():
                shown.get_by_role("button").click()
            assert page.locator("#notice").inner_text() == (
                "The change is pending again; the account's next pass issues it."
            )
            assert shown.get_attribute("data-state") == "pending"
            assert shown.get_by_role("button").count() == 0
            screenshots.take(page, "move retried")
            axe(page)

            phone = new_page(PHONE)
            sign_in(phone, origin, password)
            phone.goto(origin + "/mutations")
            screenshots.take(phone, "phone mutations")
            assert fits_a_phone(phone)

        sync.run_once(account)
        assert remote.holding("INBOX", SUBJECT) == []
        assert len(remote.holding("Projects", SUBJECT)) == 1
        ended = services.mutations().find(record.record_id)
        assert ended is not None
        assert ended.state is MutationState.COMPLETED
        # A further pass reads the recreated folder afresh and still holds one email, the one
        # the agent moved, under its identifier.
        sync.run_once(account)
        (after,) = stored_rows(services, account.account_id)
        assert after.stored_email_id == row.stored_email_id
        assert after.folder_id == int(record.value)
        assert after.folder_id != row.folder_id
