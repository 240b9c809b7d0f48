"""A folder the configuration names that its IMAP server does not have stops the commands that
would synchronize it, listing the server's folders so the owner can correct the name. Folder
names are the owner's: they are shown on the terminal, never logged."""

from __future__ import annotations

import uuid
from pathlib import Path

from log_audit import register_all
from mailfathom.domain.config import FolderMapping
from servers.dovecot import DovecotServer, ImapAccount
from sync.helpers import imap_account_config, open_services


def test_a_pass_logs_how_many_folders_are_absent_never_their_names(
    tmp_path: Path, dovecot: DovecotServer, imap_account: ImapAccount
) -> None:
    """A pass that meets an absent folder (one deleted after the start check) reports it to
    its caller and logs only the count; the log audit checks the name is not logged."""
    absent = f"Deleted-{uuid.uuid4().hex[:8]}"
    register_all([absent])
    account = imap_account_config(
        imap_account,
        folders=(FolderMapping("INBOX", "INBOX"), FolderMapping(absent, absent)),
    )
    with open_services(tmp_path, account) as services:
        result = services.account_synchronizer().run_once(account)
    assert result.missing_folders == (absent,)
