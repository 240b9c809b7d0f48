"""What every use case that resolves folders relies on (`FolderDirectory`), on SQLite,
PostgreSQL and the in-memory local copy: the folders mapped visible to tools of the accounts
asked about, by account and alias, and none withheld, even one that held mail before."""

from __future__ import annotations

from datetime import UTC, datetime

from mailfathom.app.shared.stored_mail import FolderView
from mailfathom.domain.content_state import RemoteFlags
from mailfathom.domain.folders import FolderRole
from store.conftest import Backend

T0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def test_readable_folders_are_the_visible_ones_of_the_asked_accounts_by_account_and_alias(
    backend: Backend,
) -> None:
    mail = backend.held_mail()
    inbox = mail.ensure_folder("a", "INBOX", "Inbox", FolderRole.INBOX)
    archive = mail.ensure_folder("a", "Arch", "Archive", FolderRole.ARCHIVE)
    mail.ensure_folder("a", "Secret", "Secret", visible=False)
    main = mail.ensure_folder("b", "INBOX", "Main")
    mail.ensure_folder("c", "INBOX", "Elsewhere")
    mail.record_progress(inbox, 7, T0)
    mail.add_messages(inbox, 7, [(1, RemoteFlags(), 1)], T0)

    folders = backend.folders()
    assert folders.readable_folders(["b", "a"]) == [
        FolderView(archive, "a", "Archive", FolderRole.ARCHIVE, None),
        FolderView(inbox, "a", "Inbox", FolderRole.INBOX, T0),
        FolderView(main, "b", "Main", None, None),
    ]
    assert folders.readable_folders(["nobody"]) == []
    assert folders.readable_folders([]) == []


def test_a_folder_withheld_after_mail_was_stored_is_no_longer_readable(
    backend: Backend,
) -> None:
    mail = backend.held_mail()
    inbox = mail.ensure_folder("acct", "INBOX", "Inbox")
    mail.record_progress(inbox, 7, T0)
    mail.add_messages(inbox, 7, [(1, RemoteFlags(), 1)], T0)
    folders = backend.folders()
    assert [f.folder_id for f in folders.readable_folders(["acct"])] == [inbox]
    assert mail.ensure_folder("acct", "INBOX", "Inbox", visible=False) == inbox
    assert folders.readable_folders(["acct"]) == []
    # Mapped visible again, under a new alias: the same folder.
    assert mail.ensure_folder("acct", "INBOX", "Received") == inbox
    assert [f.alias for f in folders.readable_folders(["acct"])] == ["Received"]
