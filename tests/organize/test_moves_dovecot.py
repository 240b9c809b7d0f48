"""Organizing records carried by the account's synchronization run against the test Dovecot,
checked by a second, independent IMAP client: with MOVE, without it (COPY and UID EXPUNGE of
exactly the moved UIDs), and without UIDPLUS either (nothing moved). A moved email keeps its
identifier, and a full pass afterwards stores no second copy."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from mailfathom.adapters.imap.move_store import ImapMoveWriter
from mailfathom.adapters.imap.session import ImapSession
from mailfathom.adapters.sql.moves import SqlMoveLedger
from mailfathom.adapters.sql.mutations import SqlMutationStore
from mailfathom.adapters.sql.sync_store import SqlSyncStore
from mailfathom.app.flags.set_mail_flags import FlagChangeRequest
from mailfathom.app.organize.moves import MoveConvergence
from mailfathom.app.organize.organize_email import OrganizedEmails, OrganizeRequest
from mailfathom.app.reading.get_email_content import ContentRequest
from mailfathom.bootstrap import Services
from mailfathom.domain.access import ALL_PERMISSIONS, Caller
from mailfathom.domain.config import AccountConfig, FolderMapping
from mailfathom.domain.folders import FolderRole
from mailfathom.domain.mutations import MutationFailure
from servers.dovecot import DovecotServer, ImapAccount
from sync.helpers import (
    RemoteMailbox,
    imap_account_config,
    open_services,
    sample,
    stored_rows,
    uid_fetch,
)

AGENT = Caller(permissions=ALL_PERMISSIONS, label="agent")
FOLDERS = (
    FolderMapping("INBOX", "INBOX", FolderRole.INBOX),
    FolderMapping("Archive", "Archive", FolderRole.ARCHIVE),
    FolderMapping("Trash", "Trash", FolderRole.TRASH),
    FolderMapping("Projects", "Projects"),
)


class Mailbox(RemoteMailbox):
    def subjects(self, folder: str) -> dict[int, str]:
        self.conn.select(folder, readonly=True)
        answers = uid_fetch(self.conn, "1:*", "UID BODY.PEEK[HEADER.FIELDS (SUBJECT)]")
        # A message another session (the synchronizer's MOVE) expunged, which this session
        # has not been told of yet, is answered with NIL: it is gone, so it is left out.
        headers = {uid: items[b"BODY[HEADER.FIELDS (SUBJECT)]"] for uid, items in answers.items()}
        return {
            uid: header.decode().split(":", 1)[1].strip()
            for uid, header in headers.items()
            if header is not None
        }


def _mailbox(account: ImapAccount) -> Iterator[Mailbox]:
    mailbox = Mailbox(account)
    for folder in ("Archive", "Trash", "Projects"):
        mailbox.conn.create(folder)
    yield mailbox
    mailbox.close()


@pytest.fixture
def remote(imap_account: ImapAccount) -> Iterator[Mailbox]:
    yield from _mailbox(imap_account)


@pytest.fixture(params=["MOVE", "COPY and UID EXPUNGE"])
def mover(request: pytest.FixtureRequest, dovecot: DovecotServer) -> ImapAccount:
    """A fresh user of the test Dovecot as it comes (moves by MOVE), or of one started
    without MOVE (moves by COPY, STORE \\Deleted and UID EXPUNGE)."""
    if request.param == "MOVE":
        return _user(dovecot)
    return _user(request.getfixturevalue("dovecot_without_move"))


def _user(server: DovecotServer) -> ImapAccount:
    suffix = uuid.uuid4().hex[:10]
    return server.add_user(f"org-{suffix}", f"pw-{suffix}")


def _ids(services: Services, account: AccountConfig) -> dict[str, str]:
    """Stored email id by subject."""
    rows = stored_rows(services, account.account_id)
    return {r.subject: str(r.stored_email_id) for r in rows}


def _states(services: Services, outcome: OrganizedEmails) -> list[tuple[str, int | None]]:
    store = SqlMutationStore(services.engine)
    found = [store.find(e.record.record_id) for e in outcome.changed]
    return [(r.state.value, r.last_error_code) for r in found if r is not None]


def _organize(services: Services, action: str, ids: list[str], **more: object) -> OrganizedEmails:
    return services.organizer().organize(
        AGENT, OrganizeRequest(action=action, stored_email_ids=ids, **more)
    )


def _fill(remote: Mailbox, *subjects: str) -> None:
    for subject in subjects:
        remote.append(sample(subject))


def test_every_action_reaches_the_server_and_moved_emails_keep_their_identifiers(
    tmp_path: Path, mover: ImapAccount, database_url: str | None
) -> None:
    for remote in _mailbox(mover):
        _every_action(tmp_path, mover, remote, database_url)


def _every_action(
    tmp_path: Path, user: ImapAccount, remote: Mailbox, database_url: str | None
) -> None:
    _fill(remote, "To archive", "To trash", "To file", "To label", "Stays")
    account = imap_account_config(user, FOLDERS)
    with open_services(tmp_path, account, database_url) as services:
        sync = services.account_synchronizer()
        sync.run_once(account)
        ids = _ids(services, account)
        outcomes = [
            _organize(services, "archive", [ids["To archive"]]),
            _organize(services, "trash", [ids["To trash"]]),
            _organize(services, "move", [ids["To file"]], folder="projects"),
            _organize(services, "label", [ids["To label"]], keywords=["Later", "done"]),
        ]
        # The calls wrote records only: the server has not changed.
        assert len(remote.subjects("INBOX")) == 5
        sync.run_once(account)
        for outcome in outcomes:
            assert _states(services, outcome) == [("completed", None)]
        assert sorted(remote.subjects("INBOX").values()) == ["Stays", "To label"]
        assert list(remote.subjects("Archive").values()) == ["To archive"]
        assert list(remote.subjects("Trash").values()) == ["To trash"]
        assert list(remote.subjects("Projects").values()) == ["To file"]
        labelled = next(u for u, s in remote.subjects("INBOX").items() if s == "To label")
        assert {"later", "done"} <= {w.lower() for w in remote.flags()[labelled].split()}
        unlabel = _organize(services, "unlabel", [ids["To label"]], keywords=["LATER"])
        # A full pass again: each moved email is one row, under the identifier it had.
        sync.run_once(account)
        sync.run_once(account)
        assert _states(services, unlabel) == [("completed", None)]
        assert {w.lower() for w in remote.flags()[labelled].split()} == {"done"}
        rows = stored_rows(services, account.account_id)
        assert sorted(r.subject for r in rows) == sorted(ids)
        assert {r.subject: str(r.stored_email_id) for r in rows} == ids
        folder_of = {r.subject: r.folder_id for r in rows}
        assert len({folder_of["To archive"], folder_of["To trash"], folder_of["To file"]}) == 3
        # Each id an agent held before the moves still reads, from the folder it went to.
        wanted = ContentRequest(stored_email_ids=[ids[s] for s in ("To archive", "To trash",
                                                                   "To file")])  # fmt: skip
        read = services.reading().content.read(AGENT, wanted).emails
        assert [(e.failure, e.content and e.content.folder_alias) for e in read] == [
            (None, "Archive"),
            (None, "Trash"),
            (None, "Projects"),
        ]


def test_without_move_only_the_moved_uids_are_expunged(
    tmp_path: Path, dovecot_without_move: DovecotServer, database_url: str | None
) -> None:
    user = _user(dovecot_without_move)
    for remote in _mailbox(user):
        _fill(remote, "Moved one", "Moved two", "Marked by the owner", "Untouched")
        marked = next(u for u, s in remote.subjects("INBOX").items() if s == "Marked by the owner")
        remote.store(marked, "+FLAGS", "\\Deleted")
        account = imap_account_config(user, FOLDERS)
        with open_services(tmp_path, account, database_url) as services:
            sync = services.account_synchronizer()
            sync.run_once(account)
            ids = _ids(services, account)
            outcome = _organize(services, "archive", [ids["Moved one"], ids["Moved two"]])
            sync.run_once(account)
            assert _states(services, outcome) == [("completed", None)] * 2
            # The message the owner marked \Deleted is still there: no bare EXPUNGE was sent.
            assert sorted(remote.subjects("INBOX").values()) == [
                "Marked by the owner",
                "Untouched",
            ]
            assert "\\Deleted" in remote.flags()[marked]
            assert sorted(remote.subjects("Archive").values()) == ["Moved one", "Moved two"]
            sync.run_once(account)
            rows = stored_rows(services, account.account_id)
            assert {r.subject: str(r.stored_email_id) for r in rows} == ids


def test_without_move_or_uidplus_nothing_is_moved_and_the_record_says_why(
    tmp_path: Path, dovecot_without_move_or_uidplus: DovecotServer
) -> None:
    user = _user(dovecot_without_move_or_uidplus)
    for remote in _mailbox(user):
        _fill(remote, "Cannot move", "Marked by the owner")
        marked = next(u for u, s in remote.subjects("INBOX").items() if s == "Marked by the owner")
        remote.store(marked, "+FLAGS", "\\Deleted")
        account = imap_account_config(user, FOLDERS)
        with open_services(tmp_path, account) as services:
            sync = services.account_synchronizer()
            sync.run_once(account)
            ids = _ids(services, account)
            outcome = _organize(services, "trash", [ids["Cannot move"]])
            sync.run_once(account)
            assert _states(services, outcome) == [
                ("dead-lettered", int(MutationFailure.MOVE_NOT_OFFERED))
            ]
            assert sorted(remote.subjects("INBOX").values()) == [
                "Cannot move",
                "Marked by the owner",
            ]
            assert remote.subjects("Trash") == {}


def test_a_message_gone_before_the_pass_dead_letters_its_move(
    tmp_path: Path, imap_account: ImapAccount, remote: Mailbox
) -> None:
    _fill(remote, "Gone first")
    account = imap_account_config(imap_account, FOLDERS)
    with open_services(tmp_path, account) as services:
        sync = services.account_synchronizer()
        sync.run_once(account)
        outcome = _organize(services, "archive", list(_ids(services, account).values()))
        (uid,) = remote.subjects("INBOX")
        remote.expunge(uid)
        sync.run_once(account)
        assert _states(services, outcome) == [("dead-lettered", int(MutationFailure.MESSAGE_GONE))]
        assert remote.subjects("Archive") == {}
        assert stored_rows(services, account.account_id) == []


def test_successive_moves_of_one_email_are_carried_in_the_order_asked(
    tmp_path: Path, mover: ImapAccount
) -> None:
    """Several moves of one email waiting for the same pass: each is carried from where the
    one before it left the email, so the email ends where the last one asked, once, under
    its identifier, and every record completes."""
    for remote in _mailbox(mover):
        _fill(remote, "There and on", "There and back")
        account = imap_account_config(mover, FOLDERS)
        with open_services(tmp_path, account) as services:
            sync = services.account_synchronizer()
            sync.run_once(account)
            ids = _ids(services, account)
            outcomes = [
                _organize(services, "archive", [ids["There and on"], ids["There and back"]]),
                _organize(services, "move", [ids["There and on"]], folder="Projects"),
                _organize(services, "move", [ids["There and back"]], folder="INBOX"),
            ]
            sync.run_once(account)
            for outcome in outcomes:
                assert {s for s, _ in _states(services, outcome)} == {"completed"}
            assert list(remote.subjects("INBOX").values()) == ["There and back"]
            assert list(remote.subjects("Projects").values()) == ["There and on"]
            assert remote.subjects("Archive") == {}
            sync.run_once(account)
            rows = stored_rows(services, account.account_id)
            assert {r.subject: str(r.stored_email_id) for r in rows} == ids


def test_a_flag_change_recorded_before_a_move_travels_with_the_email(
    tmp_path: Path, imap_account: ImapAccount, remote: Mailbox
) -> None:
    """A flag change and a move of one email waiting for the same pass: the flag is issued
    where the email is, then the move takes it along."""
    _fill(remote, "Moved then marked")
    account = imap_account_config(imap_account, FOLDERS)
    with open_services(tmp_path, account) as services:
        sync = services.account_synchronizer()
        sync.run_once(account)
        (email,) = _ids(services, account).values()
        _organize(services, "archive", [email])
        sync.run_once(account)
        marked = services.flags().record(AGENT, FlagChangeRequest(email, flagged=True))
        _organize(services, "move", [email], folder="INBOX")
        sync.run_once(account)
        store = SqlMutationStore(services.engine)
        (record,) = marked.records
        found = store.find(record.record_id)
        assert found is not None
        assert found.state.value == "completed"
        (uid,) = remote.flags("INBOX")
        assert "\\Flagged" in remote.flags("INBOX")[uid]


def test_a_flag_change_carried_after_a_move_is_issued_where_the_email_went(
    tmp_path: Path, imap_account: ImapAccount, remote: Mailbox
) -> None:
    """A flag change recorded while the email was in the inbox, left waiting while a move
    took it to the archive (a record written between the run's flag and move steps): the
    next run issues it in the archive, where the email now is."""
    _fill(remote, "Marked after it moved")
    account = imap_account_config(imap_account, FOLDERS)
    with open_services(tmp_path, account) as services:
        sync = services.account_synchronizer()
        sync.run_once(account)
        (email,) = _ids(services, account).values()
        _organize(services, "archive", [email])
        marked = services.flags().record(AGENT, FlagChangeRequest(email, flagged=True))
        session = services.connectors.open(account)
        assert isinstance(session, ImapSession)
        try:
            MoveConvergence(SqlMoveLedger(services.engine, SqlSyncStore(services.engine))).converge(
                account.account_id, ImapMoveWriter(session)
            )
        finally:
            session.close()
        assert list(remote.subjects("Archive").values()) == ["Marked after it moved"]
        sync.run_once(account)
        (record,) = marked.records
        found = SqlMutationStore(services.engine).find(record.record_id)
        assert found is not None
        assert found.state.value == "completed"
        (uid,) = remote.flags("Archive")
        assert "\\Flagged" in remote.flags("Archive")[uid]


def test_a_move_to_a_folder_deleted_on_the_server_dead_letters_at_once(
    tmp_path: Path, imap_account: ImapAccount, remote: Mailbox
) -> None:
    """No attempt can succeed while the destination is gone: the record says so on the
    first pass, rather than after every attempt was spent on it."""
    _fill(remote, "Nowhere to go")
    account = imap_account_config(imap_account, FOLDERS)
    with open_services(tmp_path, account) as services:
        sync = services.account_synchronizer()
        sync.run_once(account)
        outcome = _organize(services, "archive", list(_ids(services, account).values()))
        remote.conn.delete("Archive")
        sync.run_once(account)
        assert _states(services, outcome) == [("dead-lettered", int(MutationFailure.FOLDER_GONE))]
        assert list(remote.subjects("INBOX").values()) == ["Nowhere to go"]
