"""Moving messages between local Maildir folders: `MaildirMoveWriter`.

A move is one rename of the message file into the other folder, under the same name, so
there is nothing to copy and nothing to expunge; the destination's scan gives it its UID.
"""

from __future__ import annotations

from collections.abc import Sequence

from mailfathom.adapters.local.maildir import LocalSession


def _base(name: str) -> str:
    return name.split(":2,", 1)[0]


class MaildirMoveWriter:
    def __init__(self, session: LocalSession) -> None:
        self._session = session

    def can_move(self) -> bool:
        return True

    def destination(self, remote_name: str) -> tuple[int, int]:
        folder = self._session.maildir(remote_name)
        uidvalidity, _ = folder.scan()
        return uidvalidity, folder.uid_next()

    def holds_folder(self, remote_name: str) -> bool:
        return remote_name in self._session.list_folders()

    def present(self, remote_name: str, uids: Sequence[int], uidvalidity: int) -> set[int]:
        current, files = self._session.maildir(remote_name).scan()
        if current != uidvalidity:
            return set()
        return {u for u in uids if u in files and files[u].exists()}

    def transfer(self, source: str, uids: Sequence[int], destination: str) -> dict[int, int]:
        _, files = self._session.maildir(source).scan()
        target = self._session.maildir(destination)
        moved: dict[str, int] = {}
        for uid in uids:
            path = files.get(uid)
            name = target.take(path) if path is not None else None
            if name is not None:
                moved[name] = uid
        _, placed = target.scan()
        return {moved[_base(p.name)]: u for u, p in placed.items() if _base(p.name) in moved}

    def find(self, destination: str, since_uid: int, message_id: str) -> int | None:
        self._session.select(destination)
        _, files = self._session.maildir(destination).scan()
        later = [u for u in files if u >= since_uid]
        for uid, (found, _size) in sorted(self._session.fetch_identity(later).items()):
            if found == message_id:
                return uid
        return None

    def remove_originals(self, source: str, uids: Sequence[int]) -> None:
        """A rename leaves nothing behind to take out."""
