"""Creating folders of a local account: `MaildirFolderWriter`.

Local folders are Maildir directories side by side in the account's directory; a folder
under another is named as Maildir++ does, the parent's name, a dot and its own.
"""

from __future__ import annotations

from mailfathom.adapters.local.maildir import LocalSession

DELIMITER = "."


class MaildirFolderWriter:
    def __init__(self, session: LocalSession) -> None:
        self._session = session

    def delimiter(self) -> str | None:
        return DELIMITER

    def exists(self, remote_name: str) -> bool:
        return remote_name in self._session.list_folders()

    def create(self, remote_name: str) -> None:
        self._session.maildir(remote_name).create()
