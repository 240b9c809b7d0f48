"""Recorded flag changes carried by the account's synchronization run: against the test
Dovecot (seen by a second, independent IMAP client), and on a local Maildir account."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from mailfathom.adapters.sql.mutations import SqlMutationStore
from mailfathom.app.flags.set_mail_flags import FlagChangeRequest, RecordedFlagChange
from mailfathom.bootstrap import Services
from mailfathom.domain.access import ALL_PERMISSIONS, Caller
from mailfathom.domain.config import (
    AccountConfig,
    AccountKind,
    DeploymentConfig,
    FolderMapping,
    StoreConfig,
    SyncMode,
)
from mailfathom.domain.folders import FolderRole
from mailfathom.domain.mutations import MutationFailure
from servers.dovecot import ImapAccount
from sync.helpers import (
    RemoteMailbox,
    held_rows,
    imap_account_config,
    open_services,
    sample,
    stored_rows,
)
from waiting import wait_for

AGENT = Caller(permissions=ALL_PERMISSIONS, label="agent")


@pytest.fixture
def remote(imap_account: ImapAccount) -> Iterator[RemoteMailbox]:
    mailbox = RemoteMailbox(imap_account)
    yield mailbox
    mailbox.close()


def _ids(services: Services, account: AccountConfig) -> dict[int, str]:
    return {r.uid: str(r.stored_email_id) for r in held_rows(services, account.account_id)}


def _states(services: Services, recorded: RecordedFlagChange) -> list[tuple[str, int | None]]:
    store = SqlMutationStore(services.engine)
    found = [store.find(r.record_id) for r in recorded.records]
    return [(r.state.value, r.last_error_code) for r in found if r is not None]


def _words(flags: str) -> set[str]:
    return {w.casefold() for w in flags.split()}


def test_each_value_and_keyword_change_reaches_the_server_on_the_next_pass(
    tmp_path: Path, imap_account: ImapAccount, remote: RemoteMailbox
) -> None:
    plain = remote.append(sample("Flag target one"))
    marked = remote.append(sample("Flag target two"), flags="\\Seen \\Flagged old")
    labelled = remote.append(sample("Flag target three"), flags="drop stay")
    account = imap_account_config(imap_account)
    with open_services(tmp_path, account) as services:
        sync = services.account_synchronizer()
        sync.run_once(account)
        ids = _ids(services, account)
        flags = services.flags()
        first = flags.record(
            AGENT,
            FlagChangeRequest(
                ids[plain], seen=True, flagged=True, keyword_change="add", keywords=["Later"]
            ),
        )
        second = flags.record(
            AGENT,
            FlagChangeRequest(
                ids[marked], seen=False, flagged=False, keyword_change="replace", keywords=["keep"]
            ),
        )
        third = flags.record(
            AGENT, FlagChangeRequest(ids[labelled], keyword_change="remove", keywords=["DROP"])
        )
        # Nothing has reached the server yet: the call only wrote records down.
        assert "\\Seen" not in remote.flags()[plain]
        sync.run_once(account)
        seen_elsewhere = remote.flags()
        assert _words(seen_elsewhere[plain]) == {"\\seen", "\\flagged", "later"}
        assert _words(seen_elsewhere[marked]) == {"keep"}
        assert _words(seen_elsewhere[labelled]) == {"stay"}
        for recorded in (first, second, third):
            assert {s for s, _ in _states(services, recorded)} == {"completed"}
        # The pass read back what the server holds, which is what was asked.
        rows = {r.uid: r for r in stored_rows(services, account.account_id)}
        assert (rows[plain].seen, rows[plain].flagged) == (True, True)
        assert (rows[marked].seen, rows[marked].flagged) == (False, False)


def test_a_message_the_server_changed_meanwhile_keeps_the_servers_change(
    tmp_path: Path, imap_account: ImapAccount, remote: RemoteMailbox
) -> None:
    uid = remote.append(sample("Changed meanwhile"))
    account = imap_account_config(imap_account)
    with open_services(tmp_path, account) as services:
        sync = services.account_synchronizer()
        sync.run_once(account)
        recorded = services.flags().record(
            AGENT, FlagChangeRequest(_ids(services, account)[uid], seen=True)
        )
        remote.store(uid, "+FLAGS", "\\Flagged")
        sync.run_once(account)
        assert _states(services, recorded) == [
            ("dead-lettered", int(MutationFailure.CHANGED_ON_SERVER))
        ]
        assert "\\Seen" not in remote.flags()[uid]
        row = next(r for r in stored_rows(services, account.account_id) if r.uid == uid)
        assert (row.seen, row.flagged) == (False, True)


@pytest.mark.parametrize(
    ("asked", "meanwhile"),
    [
        (FlagChangeRequest("", seen=True), ("+FLAGS", "\\Seen")),
        (FlagChangeRequest("", flagged=False), ("-FLAGS", "\\Flagged")),
        (FlagChangeRequest("", keyword_change="add", keywords=["Later"]), ("+FLAGS", "later")),
        (FlagChangeRequest("", keyword_change="remove", keywords=["old"]), ("-FLAGS", "old")),
        (FlagChangeRequest("", keyword_change="replace", keywords=["new"]), ("FLAGS", "new")),
    ],
    ids=["seen", "unflagged", "add", "remove", "replace"],
)
def test_a_message_the_server_already_gave_the_asked_value_completes(
    tmp_path: Path,
    imap_account: ImapAccount,
    remote: RemoteMailbox,
    asked: FlagChangeRequest,
    meanwhile: tuple[str, str],
) -> None:
    """Another client (or this run's own command, issued by a process killed before it
    noted the outcome) changed the message after the local copy saw it, and what it holds
    now is what was asked: nothing the owner did is overwritten, so the record completes."""
    uid = remote.append(sample("Already as asked"), flags="\\Flagged old")
    account = imap_account_config(imap_account)
    with open_services(tmp_path, account) as services:
        sync = services.account_synchronizer()
        sync.run_once(account)
        request = replace(asked, stored_email_id=_ids(services, account)[uid])
        recorded = services.flags().record(AGENT, request)
        remote.store(uid, *meanwhile)
        sync.run_once(account)
        assert _states(services, recorded) == [("completed", None)]


def test_a_conflict_is_judged_per_message_even_after_this_runs_own_commands(
    tmp_path: Path, imap_account: ImapAccount, remote: RemoteMailbox
) -> None:
    """One command carries many messages, and each message keeps its own conflict check: a
    message another client changed is not overwritten because an earlier command of this
    run left another message of the same command at a higher mod-sequence."""
    changed = remote.append(sample("Changed by another client"))
    other = remote.append(sample("Changed only here"))
    account = imap_account_config(imap_account)
    with open_services(tmp_path, account) as services:
        sync = services.account_synchronizer()
        sync.run_once(account)
        ids = _ids(services, account)
        flags = services.flags()
        first = flags.record(AGENT, FlagChangeRequest(ids[other], flagged=True))
        seen_changed = flags.record(AGENT, FlagChangeRequest(ids[changed], seen=True))
        seen_other = flags.record(AGENT, FlagChangeRequest(ids[other], seen=True))
        remote.store(changed, "+FLAGS", "$Elsewhere")
        sync.run_once(account)
        assert _states(services, first) == [("completed", None)]
        assert _states(services, seen_other) == [("completed", None)]
        assert _states(services, seen_changed) == [
            ("dead-lettered", int(MutationFailure.CHANGED_ON_SERVER))
        ]
        assert "\\Seen" not in remote.flags()[changed]


def test_a_message_gone_from_the_server_dead_letters_its_record(
    tmp_path: Path, imap_account: ImapAccount, remote: RemoteMailbox
) -> None:
    uid = remote.append(sample("Gone before the pass"))
    account = imap_account_config(imap_account)
    with open_services(tmp_path, account) as services:
        sync = services.account_synchronizer()
        sync.run_once(account)
        recorded = services.flags().record(
            AGENT, FlagChangeRequest(_ids(services, account)[uid], flagged=True)
        )
        remote.expunge(uid)
        sync.run_once(account)
        assert _states(services, recorded) == [("dead-lettered", int(MutationFailure.MESSAGE_GONE))]


def test_a_message_whose_folder_was_deleted_on_the_server_dead_letters_at_once(
    tmp_path: Path, imap_account: ImapAccount, remote: RemoteMailbox
) -> None:
    """The message went with its folder: the record says so on the first pass, rather than
    after every attempt was spent on a folder that cannot be opened."""
    remote.conn.create("Projects")
    remote.conn.append("Projects", "", None, sample("Gone with its folder"))
    folders = (
        FolderMapping("INBOX", "INBOX", FolderRole.INBOX),
        FolderMapping("Projects", "Projects"),
    )
    account = imap_account_config(imap_account, folders)
    with open_services(tmp_path, account) as services:
        sync = services.account_synchronizer()
        sync.run_once(account)
        (stored,) = held_rows(services, account.account_id)
        recorded = services.flags().record(
            AGENT, FlagChangeRequest(str(stored.stored_email_id), flagged=True)
        )
        remote.conn.delete("Projects")
        sync.run_once(account)
        assert _states(services, recorded) == [("dead-lettered", int(MutationFailure.MESSAGE_GONE))]


def test_a_new_record_wakes_a_continuous_run_waiting_in_idle(
    tmp_path: Path, imap_account: ImapAccount, remote: RemoteMailbox
) -> None:
    uid = remote.append(sample("Woken by a record"))
    # The polling interval is far beyond the deadline: only the record can start the work.
    account = imap_account_config(
        imap_account, sync_mode=SyncMode.PUSH, poll_interval_seconds=3600.0
    )
    with open_services(tmp_path, account) as services:
        sync = services.account_synchronizer()
        stop = threading.Event()
        worker = threading.Thread(target=sync.run_forever, args=(account, stop), daemon=True)
        worker.start()
        try:
            wait_for(lambda: _ids(services, account).get(uid), "the first pass stored the mail")
            email = _ids(services, account)[uid]
            recorded = services.flags().record(AGENT, FlagChangeRequest(email, seen=True))
            wait_for(
                lambda: "\\Seen" in remote.flags()[uid], "the recorded change reached the server"
            )
            wait_for(
                lambda: _states(services, recorded) == [("completed", None)],
                "the record completed",
            )
        finally:
            stop.set()
            worker.join(timeout=60)
        assert not worker.is_alive()


def test_a_local_account_applies_the_records_to_the_maildir_flags(tmp_path: Path) -> None:
    account = AccountConfig(
        account_id="local",
        display_name="Local",
        kind=AccountKind.LOCAL,
        folders=(FolderMapping("INBOX", "INBOX", FolderRole.INBOX),),
    )
    config = DeploymentConfig(store=StoreConfig(data_dir=tmp_path / "data"), accounts=(account,))
    with Services.open(config) as services:
        folder = services.connectors.local.folder("local", "INBOX")
        folder.deliver(sample("Local flag target"))
        sync = services.account_synchronizer()
        sync.run_once(account)
        (email,) = _ids(services, account).values()
        flags = services.flags()
        marked = flags.record(AGENT, FlagChangeRequest(email, seen=True, flagged=True))
        labelled = flags.record(
            AGENT, FlagChangeRequest(email, keyword_change="add", keywords=["later"])
        )
        sync.run_once(account)
        (name,) = [p.name for p in (folder.path / "cur").iterdir()]
        assert name.endswith(":2,FS")
        assert {s for s, _ in _states(services, marked)} == {"completed"}
        assert _states(services, labelled) == [
            ("dead-lettered", int(MutationFailure.KEYWORD_NOT_PERMANENT))
        ]
        row = stored_rows(services, account.account_id)[0]
        assert (row.seen, row.flagged) == (True, True)
