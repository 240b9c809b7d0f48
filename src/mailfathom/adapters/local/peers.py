"""Peer mailboxes: mail between the accounts of one deployment, delivered without a server.

A local account receives, through the delivery pass, the mail addressed to any address it
lists (`Addresses`, and its `Delivery.Address`). The message lands in the folder the account
maps to the inbox role as a file named after the send and the recipient account, so a
delivery repeated after a crash finds the file there and adds nothing.

No receiving server stands between the accounts, so the deployment writes what a receiving
server would: its own `Authentication-Results` field, on top of the delivered message and of
the sender's own copy, naming the account that submitted it (see `deployment_results`).
"""

from __future__ import annotations

from mailfathom.adapters.authentication.deployment_results import delivered
from mailfathom.adapters.local.maildir import LocalConnector
from mailfathom.domain.config import AccountKind, DeploymentConfig
from mailfathom.domain.folders import FolderRole


class LocalPeerMailboxes:
    def __init__(self, config: DeploymentConfig, connector: LocalConnector) -> None:
        self._config = config
        self._connector = connector
        self._owners: dict[str, str] = {}
        self._inboxes: dict[str, str] = {}
        self._sent: dict[str, str] = {}
        for account in config.accounts:
            if account.kind is not AccountKind.LOCAL:
                continue
            for folder in account.folders:
                if folder.role is FolderRole.INBOX:
                    self._inboxes.setdefault(account.account_id, folder.remote_name)
                if folder.role is FolderRole.SENT:
                    self._sent.setdefault(account.account_id, folder.remote_name)
            if account.account_id not in self._inboxes:
                continue
            for address in sorted(account.own_addresses()):
                self._owners.setdefault(address, account.account_id)

    def owner_of(self, address: str) -> str | None:
        return self._owners.get(address.lower())

    def deliver(self, account_id: str, mime: bytes, key: str, *, sender: str) -> None:
        folder = self._connector.folder(account_id, self._inboxes[account_id])
        folder.deliver_once(self._stamped(sender, mime), f"{key}.{account_id}.peer")

    def file_sent(self, account_id: str, mime: bytes, key: str) -> bool:
        """Keep the sender's copy in its sent folder (marked seen), when it maps one."""
        remote = self._sent.get(account_id)
        if remote is None:
            return False
        folder = self._connector.folder(account_id, remote)
        folder.deliver_once(self._stamped(account_id, mime), f"{key}.sent", flags="S")
        return True

    def _stamped(self, sender: str, mime: bytes) -> bytes:
        account = self._config.account(sender)
        if account is None:
            return delivered(mime, self._config.authserv_id, None, frozenset())
        address = account.delivery.address if account.delivery is not None else None
        return delivered(mime, self._config.authserv_id, address, account.own_addresses())
