"""Keeping the sender's copy of what was sent, in the folder each account maps to the sent
role: written into a local account's Maildir folder, appended (with \\Seen) to an IMAP
account's folder on its server. The next synchronization brings the copy into the store like
any other message."""

from __future__ import annotations

from mailfathom.adapters.imap.session import ImapConnector
from mailfathom.adapters.local.peers import LocalPeerMailboxes
from mailfathom.domain.config import AccountKind, DeploymentConfig
from mailfathom.domain.folders import FolderRole


class SentFolderCopies:
    def __init__(
        self, config: DeploymentConfig, local: LocalPeerMailboxes, imap: ImapConnector
    ) -> None:
        self._config = config
        self._local = local
        self._imap = imap

    def file(self, account_id: str, mime: bytes, key: str) -> bool:
        account = self._config.account(account_id)
        if account is None:
            return False
        if account.kind is AccountKind.LOCAL:
            return self._local.file_sent(account_id, mime, key)
        sent = next((f for f in account.folders if f.role is FolderRole.SENT), None)
        if sent is None:
            return False
        session = self._imap.open(account)
        try:
            session.append(sent.remote_name, mime, flags=(b"\\Seen",))
        finally:
            session.close()
        return True
