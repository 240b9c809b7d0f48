"""The local copy of the mailboxes in memory, as far as flag changes and moves see it: the
mapped folders with their UIDVALIDITY, and each stored message's place and flags.

It answers `FolderDirectory` for the use cases; synchronization's writes (folders mapped,
progress recorded, messages stored, removed and read back) are methods of the same names as
the SQL sync store's, for the tests to fill it the way synchronization fills the real one."""

from __future__ import annotations

import dataclasses
import threading
import uuid
from collections.abc import Iterable, Sequence
from datetime import datetime

from fakes.outbox import utc
from mailfathom.app.shared.stored_mail import FolderView
from mailfathom.app.shared.stored_mail_ports import FolderDirectory
from mailfathom.app.sync.types import FlagChange
from mailfathom.domain.content_state import RemoteFlags
from mailfathom.domain.folders import FolderRole


@dataclasses.dataclass
class LocalFolder:
    folder_id: int
    account_id: str
    remote_name: str
    alias: str
    role: FolderRole | None
    visible: bool
    uidvalidity: int | None = None
    last_committed_at: datetime | None = None


@dataclasses.dataclass
class LocalMessage:
    stored_email_id: uuid.UUID
    account_id: str
    folder_id: int
    uid: int
    uidvalidity: int
    modseq: int | None
    flags: RemoteFlags


class InMemoryLocalCopy:
    def __init__(self) -> None:
        # Held by the mutation store too, so a record and the copy it shows change together.
        self.lock = threading.RLock()
        self.folders: dict[int, LocalFolder] = {}
        self.messages: dict[uuid.UUID, LocalMessage] = {}

    # -- FolderDirectory -------------------------------------------------------------------

    def readable_folders(self, account_ids: Sequence[str]) -> list[FolderView]:
        wanted = set(account_ids)
        with self.lock:
            found = [
                FolderView(f.folder_id, f.account_id, f.alias, f.role, f.last_committed_at)
                for f in self.folders.values()
                if f.visible and f.account_id in wanted
            ]
        return sorted(found, key=lambda f: (f.account_id, f.alias, f.folder_id))

    def current(self, message: LocalMessage) -> bool:
        """Whether the message's row names a message of its folder's current UIDVALIDITY."""
        return self.folders[message.folder_id].uidvalidity == message.uidvalidity

    # -- what synchronization writes ---------------------------------------------------------

    def ensure_folder(
        self,
        account_id: str,
        remote_name: str,
        alias: str,
        role: FolderRole | None = None,
        visible: bool = True,
    ) -> int:
        """The folder of that account and remote name, created or remapped; its identity."""
        with self.lock:
            for folder in self.folders.values():
                if (folder.account_id, folder.remote_name) == (account_id, remote_name):
                    folder.alias, folder.role, folder.visible = alias, role, visible
                    return folder.folder_id
            folder_id = len(self.folders) + 1
            self.folders[folder_id] = LocalFolder(
                folder_id, account_id, remote_name, alias, role, visible
            )
            return folder_id

    def record_progress(self, folder_id: int, uidvalidity: int, committed_at: datetime) -> None:
        with self.lock:
            folder = self.folders[folder_id]
            folder.uidvalidity = uidvalidity
            folder.last_committed_at = utc(committed_at)

    def add_messages(
        self,
        folder_id: int,
        uidvalidity: int,
        items: Sequence[tuple[int, RemoteFlags, int | None]],
        committed_at: datetime,
    ) -> list[uuid.UUID]:
        """Store messages given as (UID, flags, mod-sequence); their new identities."""
        with self.lock:
            folder = self.folders[folder_id]
            stored = []
            for uid, flags, modseq in items:
                message = LocalMessage(
                    uuid.uuid4(), folder.account_id, folder_id, uid, uidvalidity, modseq, flags
                )
                self.messages[message.stored_email_id] = message
                stored.append(message.stored_email_id)
            folder.last_committed_at = utc(committed_at)
            return stored

    def _at(self, folder_id: int, uidvalidity: int, uids: Iterable[int]) -> list[LocalMessage]:
        wanted = set(uids)
        return [
            m
            for m in self.messages.values()
            if m.folder_id == folder_id and m.uidvalidity == uidvalidity and m.uid in wanted
        ]

    def remove_uids(self, folder_id: int, uidvalidity: int, uids: Iterable[int]) -> None:
        with self.lock:
            for message in self._at(folder_id, uidvalidity, uids):
                del self.messages[message.stored_email_id]

    def flags_of(self, stored_email_id: uuid.UUID) -> tuple[int, RemoteFlags]:
        """Where the message is held and the flags its local copy shows."""
        with self.lock:
            message = self.messages[stored_email_id]
            return message.folder_id, message.flags

    def apply_flag_changes(
        self,
        folder_id: int,
        uidvalidity: int,
        changes: Sequence[FlagChange],
        observed_at: datetime,
    ) -> None:
        with self.lock:
            by_uid = {change.uid: change for change in changes}
            for message in self._at(folder_id, uidvalidity, by_uid):
                message.flags = by_uid[message.uid].flags
                message.modseq = by_uid[message.uid].modseq
            self.folders[folder_id].last_committed_at = utc(observed_at)


_: FolderDirectory = InMemoryLocalCopy()
