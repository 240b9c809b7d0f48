"""Organizing a local (Maildir) account: a move is a rename into the other folder's Maildir,
the email keeps its identifier, and keywords follow set_mail_flags' rule for a Maildir (it
keeps none: a label is dead-lettered, an unlabel completes)."""

from __future__ import annotations

from pathlib import Path

import structlog

from log_audit import register
from mailfathom.app.organize.organize_email import OrganizeRequest
from mailfathom.bootstrap import Services
from mailfathom.domain.config import (
    AccountConfig,
    AccountKind,
    DeploymentConfig,
    FolderMapping,
    StoreConfig,
)
from mailfathom.domain.folders import FolderRole
from mailfathom.domain.mutations import MutationFailure
from sync.helpers import sample, stored_rows

from .test_moves_dovecot import AGENT, _ids, _organize, _states


def _local(tmp_path: Path, *folders: FolderMapping) -> tuple[AccountConfig, DeploymentConfig]:
    """A local (Maildir) account "local" mapping INBOX and `folders`, and its deployment."""
    account = AccountConfig(
        account_id="local",
        display_name="Local",
        kind=AccountKind.LOCAL,
        folders=(FolderMapping("INBOX", "INBOX", FolderRole.INBOX), *folders),
    )
    return account, DeploymentConfig(
        store=StoreConfig(data_dir=tmp_path / "data"), accounts=(account,)
    )


def test_a_local_account_moves_files_and_keeps_identifiers(tmp_path: Path) -> None:
    account, config = _local(
        tmp_path,
        FolderMapping("Archive", "Archive", FolderRole.ARCHIVE),
        FolderMapping("Trash", "Trash", FolderRole.TRASH),
    )
    with Services.open(config) as services:
        inbox = services.connectors.local.folder("local", "INBOX")
        for subject in ("Local archived", "Local trashed", "Local kept"):
            inbox.deliver(sample(subject))
        sync = services.account_synchronizer()
        sync.run_once(account)
        ids = _ids(services, account)
        archived = _organize(services, "archive", [ids["Local archived"]])
        trashed = _organize(services, "move", [ids["Local trashed"]], folder="Trash")
        labelled = _organize(services, "label", [ids["Local kept"]], keywords=["later"])
        unlabelled = _organize(services, "unlabel", [ids["Local kept"]], keywords=["old"])
        sync.run_once(account)
        sync.run_once(account)
        assert _states(services, archived) == [("completed", None)]
        assert _states(services, trashed) == [("completed", None)]
        assert _states(services, labelled) == [
            ("dead-lettered", int(MutationFailure.KEYWORD_NOT_PERMANENT))
        ]
        assert _states(services, unlabelled) == [("completed", None)]

        def files(folder: str) -> int:
            root = services.connectors.local.folder("local", folder).path
            return sum(1 for sub in ("new", "cur") for _ in (root / sub).iterdir())

        assert (files("INBOX"), files("Archive"), files("Trash")) == (1, 1, 1)
        rows = stored_rows(services, account.account_id)
        assert {r.subject: str(r.stored_email_id) for r in rows} == ids
        assert len({r.folder_id for r in rows}) == 3


def test_a_local_account_creates_a_folder_and_files_mail_in_it(tmp_path: Path) -> None:
    """createFolder on a local account: a Maildir beside the others (under a parent, named
    parent.name as Maildir++ does), published under its alias, and mail can be moved in."""
    account, config = _local(tmp_path, FolderMapping("Archive", "Archive", FolderRole.ARCHIVE))
    with Services.open(config) as services:
        services.connectors.local.folder("local", "INBOX").deliver(sample("Local filed"))
        sync = services.account_synchronizer()
        sync.run_once(account)
        ids = _ids(services, account)
        organizer = services.organizer()
        for name, parent in (("Projects", None), ("Later", "Archive")):
            organizer.organize(
                AGENT,
                OrganizeRequest(action="createFolder", account="local", name=name, parent=parent),
            )
        sync.run_once(account)
        root = services.connectors.local.account_root("local")
        assert (root / "Projects" / "cur").is_dir()
        assert (root / "Archive.Later" / "cur").is_dir()
        aliases = {f.alias for f in services._reader().readable_folders(["local"])}
        assert {"Projects", "Archive/Later"} <= aliases
        moved = _organize(services, "move", [ids["Local filed"]], folder="archive/later")
        sync.run_once(account)
        sync.run_once(account)
        assert _states(services, moved) == [("completed", None)]
        assert sum(1 for sub in ("new", "cur") for _ in (root / "Archive.Later" / sub).iterdir())
        rows = stored_rows(services, account.account_id)
        assert {r.subject: str(r.stored_email_id) for r in rows} == ids


def test_no_log_line_carries_the_name_a_caller_gave_a_folder(tmp_path: Path) -> None:
    """A created folder's alias is text a caller chose: the run's log lines name the folder by
    its identifier in the store and its role, never by alias."""
    name = "Garden plans of the neighbours"
    register(name)
    account, config = _local(tmp_path)
    with Services.open(config) as services, structlog.testing.capture_logs() as logs:
        services.connectors.local.folder("local", "INBOX").deliver(sample("Local filed"))
        sync = services.account_synchronizer()
        sync.run_once(account)
        services.organizer().organize(
            AGENT, OrganizeRequest(action="createFolder", account="local", name=name)
        )
        sync.run_once(account)
        sync.run_once(account)
        created = {
            f.folder_id for f in services._reader().readable_folders(["local"]) if f.alias == name
        }
    synchronized = [e for e in logs if e["event"] == "folder.synchronized"]
    assert created <= {e["folder_id"] for e in synchronized}
    assert {e["role"] for e in synchronized} == {"Inbox", None}
    assert not [e for e in logs if any(name in str(value) for value in e.values())]
