"""Creating folders over a synchronization run's IMAP session: `ImapFolderWriter`.

The hierarchy delimiter is the one LIST answers for the account's folders (RFC 3501 section
6.3.8); names are sent as imapclient encodes them (modified UTF-7, RFC 3501 section 5.1.3).
"""

from __future__ import annotations

from mailfathom.adapters.imap.session import ImapSession
from mailfathom.app.organize.ports import FolderRefused


class ImapFolderWriter:
    def __init__(self, session: ImapSession) -> None:
        self._session = session
        self._names: set[str] | None = None
        self._delimiter: str | None = None

    def _listed(self) -> set[str]:
        if self._names is None:
            listed = self._session.server_folders()
            self._names = {f.name for f in listed}
            self._delimiter = next((f.delimiter for f in listed if f.delimiter), None)
        return self._names

    def delimiter(self) -> str | None:
        self._listed()
        return self._delimiter

    def exists(self, remote_name: str) -> bool:
        return remote_name in self._listed()

    def create(self, remote_name: str) -> None:
        if not self._session.create_folder(remote_name):
            raise FolderRefused
        self._listed().add(remote_name)
