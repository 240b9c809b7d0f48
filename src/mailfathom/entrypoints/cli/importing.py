"""Importing an existing Maildir or mbox into a local account."""

from __future__ import annotations

import mailbox
from pathlib import Path

from mailfathom.bootstrap import Services
from mailfathom.domain.config import AccountKind
from mailfathom.domain.errors import ConfigurationError, MailFathomError
from mailfathom.entrypoints.cli.loading import account_not_configured


def _maildir_flags(message: mailbox.MaildirMessage) -> str:
    return "".join(c for c in message.get_flags() if c in "SFRDT")


def import_into_local(services: Services, account_id: str, folder: str, source: Path) -> int:
    account = services.config.account(account_id)
    if account is None:
        raise account_not_configured(account_id)
    if account.kind is not AccountKind.LOCAL:
        raise ConfigurationError(f"Account '{account_id}' is not a local account.")
    if folder.upper() == "INBOX":
        folder = "INBOX"  # as the configuration stores it: INBOX is named in any case
    if folder not in {m.remote_name for m in account.folders}:
        raise ConfigurationError(f"Account '{account_id}' maps no folder with that name.")
    target = services.connectors.local.folder(account_id, folder)
    source = source.expanduser()
    count = 0
    if source.is_dir() and (source / "cur").is_dir():
        for message in mailbox.Maildir(source, factory=None, create=False):
            assert isinstance(message, mailbox.MaildirMessage)
            target.deliver(message.as_bytes(), _maildir_flags(message))
            count += 1
    elif source.is_file():
        for mbox_message in mailbox.mbox(source, create=False):
            status = mbox_message.get("Status", "") + mbox_message.get("X-Status", "")
            flags = ("S" if "R" in status else "") + ("F" if "F" in status else "")
            target.deliver(mbox_message.as_bytes(), flags)
            count += 1
    else:
        raise MailFathomError(
            "The import source is neither a Maildir nor an mbox file.", code=11002
        )
    return count
