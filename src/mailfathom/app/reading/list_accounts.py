"""list_accounts: the accounts this deployment serves and how current each folder is."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mailfathom.app.reading.projection import freshness
from mailfathom.app.reading.views import FolderFreshness
from mailfathom.app.shared.authorization import Permissions, require
from mailfathom.app.shared.mailbox_selection import ServedAccount
from mailfathom.app.shared.stored_mail_ports import MailboxReadStore
from mailfathom.domain.access import Caller, Permission

PERMISSIONS: Permissions = frozenset({Permission.MAIL_READ})


@dataclass(frozen=True, slots=True)
class AccountEntry:
    account_id: str
    display_name: str
    synchronization_mode: str
    folders: tuple[FolderFreshness, ...]


@dataclass(frozen=True, slots=True)
class AccountDirectory:
    accounts: tuple[AccountEntry, ...]
    synchronization_enabled: bool


class AccountDirectoryReader:
    """Publishes the served account set, the one place where it is published on purpose.

    Connection details never leave the configuration: nothing here carries a server, a user
    name or a secret reference. Folders withheld from tools are not named."""

    def __init__(
        self,
        store: MailboxReadStore,
        served: Sequence[ServedAccount],
        *,
        synchronization_enabled: bool,
    ) -> None:
        self._store = store
        self._served = sorted(served, key=lambda a: a.account_id)
        self._sync_enabled = synchronization_enabled

    def read(self, caller: Caller) -> AccountDirectory:
        require(caller, PERMISSIONS)
        folders = self._store.readable_folders([a.account_id for a in self._served])
        entries = tuple(
            AccountEntry(
                account_id=a.account_id,
                display_name=a.display_name,
                synchronization_mode=a.synchronization_mode,
                folders=freshness(f for f in folders if f.account_id == a.account_id),
            )
            for a in self._served
        )
        return AccountDirectory(entries, self._sync_enabled)
