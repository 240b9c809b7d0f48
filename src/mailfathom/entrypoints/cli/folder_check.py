"""Checking, before any work starts, that every folder the configuration names exists on its
IMAP server.

A misspelt `Remote` would otherwise be skipped by every pass while the rest of the account is
kept, which looks like success. The refusal lists, per account, the configured folders the
server does not have and the folders it does have, so the owner can correct the name. Folder
names are the owner's: they travel in the error's fields for the terminal, never in its
message, which a log might carry.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from rich.console import Console

from mailfathom.bootstrap import Services
from mailfathom.domain.config import AccountConfig, AccountKind
from mailfathom.domain.errors import ConfigurationError


@dataclass(frozen=True, slots=True)
class AbsentFolders:
    """Configured folders one account's server does not have, and what it has instead."""

    account_id: str
    absent: tuple[str, ...]
    on_server: tuple[str, ...]


class FoldersNotOnServer(ConfigurationError):
    """The configuration names folders their IMAP servers do not have (code 11001)."""

    def __init__(self, accounts: Iterable[AbsentFolders]) -> None:
        self.accounts = tuple(accounts)
        parts = [
            f"account '{a.account_id}': {len(a.absent)} configured folder(s) are not on the "
            f"IMAP server, which has {len(a.on_server)}"
            for a in self.accounts
        ]
        super().__init__(
            "the configuration names folders their servers do not have, so nothing was "
            "started: " + "; ".join(parts) + ". Correct each Accounts.Folders.Remote."
        )


def _identity(name: str) -> str:
    # INBOX is case-insensitive in IMAP (RFC 3501 section 5.1); every other name is not.
    return "INBOX" if name.upper() == "INBOX" else name


def require_folders(services: Services, accounts: Iterable[AccountConfig]) -> None:
    """Raise `FoldersNotOnServer` when a mapped folder of an IMAP account is not on its
    server; a server that cannot be reached raises its own error."""
    found: list[AbsentFolders] = []
    for account in accounts:
        if account.kind is not AccountKind.IMAP or not account.folders:
            continue
        session = services.connectors.open(account)
        try:
            on_server = session.list_folders()
        finally:
            session.close()
        have = {_identity(name) for name in on_server}
        absent = tuple(
            f.remote_name for f in account.folders if _identity(f.remote_name) not in have
        )
        if absent:
            found.append(AbsentFolders(account.account_id, absent, tuple(sorted(on_server))))
    if found:
        raise FoldersNotOnServer(found)


def show_absent(console: Console, error: FoldersNotOnServer) -> None:
    """The folder names, each quoted so that spaces and control characters show."""

    def quoted(names: Iterable[str]) -> str:
        return ", ".join(json.dumps(name, ensure_ascii=False) for name in names) or "(none)"

    for account in error.accounts:
        for label, names in (
            ("not on the server", account.absent),
            ("the server has", account.on_server),
        ):
            console.print(
                f"  account '{account.account_id}': {label}: {quoted(names)}",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )
