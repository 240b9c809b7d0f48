"""Folders as the configuration maps them, and a contact book held to what tools may read.

Every read is scoped by the folder rows: a row is read when its mapping makes it visible to
tools. When the configuration changes (a deployment starts with another one), the rows are
settled before anything reads them: a folder mapped withheld, a folder no mapping names any
more and every folder of an account no longer configured are withheld alike. The contact
book then forgets what only withheld mail supports, and a folder shown again contributes
the people of its stored mail as if it had just been read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from mailfathom.app.sync.ports import ContactBookUpkeep, ContactCollector, FolderVisibility
from mailfathom.app.sync.types import FolderRecord
from mailfathom.domain.config import AccountConfig, FolderMapping
from mailfathom.domain.contact_collection import people_seen
from mailfathom.domain.folders import FolderRole

CreatedFolders = Callable[[str], Sequence[FolderMapping]]


def mapped_folders(account: AccountConfig, created: CreatedFolders | None) -> list[FolderMapping]:
    """The account's configured folders, then the ones created through its records (kept
    with the configured ones unless the configuration maps them itself)."""
    mappings = list(account.folders)
    if created is not None:
        configured = {m.remote_name for m in mappings}
        mappings += [m for m in created(account.account_id) if m.remote_name not in configured]
    return mappings


def settle_folders(
    folders: FolderVisibility,
    book: ContactBookUpkeep,
    accounts: Sequence[AccountConfig],
    created: CreatedFolders | None,
    clock: Callable[[], datetime],
) -> None:
    """Bring the folder rows to the configuration, then the contact book to the rows."""
    folders.withhold_accounts([a.account_id for a in accounts])
    for account in accounts:
        shown = folders.settle(account.account_id, mapped_folders(account, created))
        if account.collect_contacts:
            for folder in shown:
                _collect_stored(folders, book, folder, account.own_addresses(), clock)
    book.forget_withheld()


def _collect_stored(
    folders: FolderVisibility,
    book: ContactCollector,
    folder: FolderRecord,
    own_addresses: frozenset[str],
    clock: Callable[[], datetime],
) -> None:
    role = FolderRole.parse(folder.role) if folder.role is not None else None
    for batch in folders.stored_participants(folder.folder_id):
        seen = people_seen(batch, role, own_addresses)
        if seen:
            book.collect(seen, clock())
