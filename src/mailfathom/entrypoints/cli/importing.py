"""Importing existing mail (a Maildir, .eml files or an mbox) into a local account."""

from __future__ import annotations

from pathlib import Path

from mailfathom.bootstrap import ImportCount, Services
from mailfathom.domain.config import AccountKind
from mailfathom.domain.errors import ConfigurationError
from mailfathom.entrypoints.cli.loading import account_not_configured


def import_into_local(
    services: Services, account_id: str, folder: str, source: Path
) -> ImportCount:
    account = services.config.account(account_id)
    if account is None:
        raise account_not_configured(account_id)
    if account.kind is not AccountKind.LOCAL:
        raise ConfigurationError(f"Account '{account_id}' is not a local account.")
    if folder.upper() == "INBOX":
        folder = "INBOX"  # as the configuration stores it: INBOX is named in any case
    if folder not in {m.remote_name for m in account.folders}:
        raise ConfigurationError(f"Account '{account_id}' maps no folder with that name.")
    return services.import_mail(account_id, folder, source.expanduser())
