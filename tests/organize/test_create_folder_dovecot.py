"""organize_email's createFolder against the test Dovecot, seen by a second, independent
IMAP client: the folder is created (and subscribed) by the next synchronization run, under a
parent when one is named, published under its alias, and an email moved into it in the same
run arrives there and keeps its identifier. A name already on the server is never taken
over nor told of (the folder gets the next free numbered name), and a run cut off after its
CREATE finishes the record instead of refusing it; so does the run after an operator's retry
(`mfctl mutations retry`) of a record dead-lettered then."""

from __future__ import annotations

import os
import re
import threading
import uuid
from pathlib import Path

import pytest

from cli.operator_cli import run_to_exit
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.adapters.imap.folder_writer import ImapFolderWriter
from mailfathom.adapters.imap.session import ImapSession
from mailfathom.adapters.sql.folder_creations import SqlFolderCreations
from mailfathom.app.flags.administer_mutations import Retried
from mailfathom.app.organize.create_folder import CreatedFolder
from mailfathom.app.organize.folder_creations import NUMBERED_NAMES, FolderCreationConvergence
from mailfathom.app.organize.organize_email import OrganizeRequest
from mailfathom.bootstrap import Services
from mailfathom.domain.config import SyncMode
from mailfathom.domain.errors import Refusal, SyncError
from mailfathom.domain.mutations import MAX_ATTEMPTS, MutationFailure
from servers.dovecot import DovecotServer, ImapAccount
from sync.helpers import imap_account_config, open_services, sample, stored_rows
from waiting import wait_for

from .test_moves_dovecot import AGENT, FOLDERS, Mailbox, _fill, _ids, _mailbox, _organize, _user


def _create(services: Services, account_id: str, name: str, **more: object) -> CreatedFolder:
    outcome = services.organizer().organize(
        AGENT, OrganizeRequest(action="createFolder", account=account_id, name=name, **more)
    )
    assert outcome.folder is not None
    assert outcome.changed == ()
    return outcome.folder


def _record(services: Services, created: CreatedFolder) -> tuple[str, int | None]:
    found = SqlFolderCreations(services.engine).find(created.record.creation_id)
    assert found is not None
    return found.state.value, found.last_error_code


def _aliases(services: Services, account_id: str) -> set[str]:
    return {f.alias for f in services._reader().readable_folders([account_id])}


_LIST_LINE = re.compile(r'\((?:[^)]*)\) (?:NIL|"(?:\\.|[^"])*") (?P<name>.*)')


def _listed(remote: Mailbox, command: str = "LIST") -> set[str]:
    typ, data = remote.conn.lsub() if command == "LSUB" else remote.conn.list()
    assert typ == "OK"
    # `(flags) "delimiter" name`, the name quoted where it holds a space.
    listed = (_LIST_LINE.fullmatch(line.decode()) for line in data if isinstance(line, bytes))
    return {m["name"].strip('"') for m in listed if m is not None}


def test_a_folder_is_created_published_and_filled_in_one_run(
    tmp_path: Path, dovecot: DovecotServer
) -> None:
    user = _user(dovecot)
    for remote in _mailbox(user):
        _fill(remote, "Filed in the new folder", "Stays")
        account = imap_account_config(user, FOLDERS)
        with open_services(tmp_path, account) as services:
            sync = services.account_synchronizer()
            sync.run_once(account)
            ids = _ids(services, account)
            top = _create(services, account.account_id, "Receipts", request_id="r-1")
            nested = _create(services, account.account_id, "2026", parent="projects")
            assert (top.alias, top.parent_alias) == ("Receipts", None)
            assert (nested.alias, nested.parent_alias) == ("Projects/2026", "Projects")
            assert top.record.state.value == "pending"
            # Not a folder until the run created it: a move into it names nothing served.
            with pytest.raises(Refusal) as unknown:
                _organize(services, "move", [ids["Filed in the new folder"]], folder="Receipts")
            assert unknown.value.code == 53012
            # The call opened no connection: the server has no such folder yet.
            assert "Receipts" not in _listed(remote)
            sync.run_once(account)
            assert _record(services, top) == ("completed", None)
            assert _record(services, nested) == ("completed", None)
            delimiter = remote.conn.list()[1][0].decode().split('"')[1]  # type: ignore[union-attr]
            assert {"Receipts", f"Projects{delimiter}2026"} <= _listed(remote)
            assert {"Receipts", f"Projects{delimiter}2026"} <= _listed(remote, "LSUB")
            assert {"Receipts", "Projects/2026"} <= _aliases(services, account.account_id)
            moved = _organize(services, "move", [ids["Filed in the new folder"]], folder="receipts")
            sync.run_once(account)
            assert list(remote.subjects("Receipts").values()) == ["Filed in the new folder"]
            sync.run_once(account)
            rows = stored_rows(services, account.account_id)
            assert {r.subject: str(r.stored_email_id) for r in rows} == ids
            assert moved.changed[0].record.state.value == "pending"
            # A retry answers the same record; the same requestId for another name is refused.
            again = _create(services, account.account_id, "Receipts", request_id="r-1")
            assert again.record.creation_id == top.record.creation_id
            assert again.record.state.value == "completed"
            with pytest.raises(Refusal) as refused:
                _create(services, account.account_id, "Invoices", request_id="r-1")
            assert refused.value.code == 51020
            # A served folder's name is taken.
            with pytest.raises(Refusal) as taken:
                _create(services, account.account_id, "ARCHIVE")
            assert taken.value.code == 51020


def test_a_name_already_on_the_server_is_not_taken_over_nor_told(
    tmp_path: Path, dovecot: DovecotServer
) -> None:
    """A folder of that name the deployment withholds (or does not map) is left as it is, and
    the caller is told nothing of it: the new folder is created under the next free numbered
    name and published under the alias asked for, as if the name had been free."""
    user = _user(dovecot)
    for remote in _mailbox(user):
        remote.conn.create("Unmapped")
        _fill(remote, "Kept where it is")
        remote.conn.select("INBOX")
        remote.conn.copy("1:*", "Unmapped")
        account = imap_account_config(user, FOLDERS)
        with open_services(tmp_path, account) as services:
            sync = services.account_synchronizer()
            sync.run_once(account)
            outcome = _create(services, account.account_id, "Unmapped", request_id="u-1")
            free = _create(services, account.account_id, "Free", request_id="f-1")
            sync.run_once(account)
            assert _record(services, outcome) == ("completed", None)
            assert _record(services, free) == ("completed", None)
            again = _create(services, account.account_id, "Unmapped", request_id="u-1")
            assert again.record.state.value == "completed"
            assert {"Unmapped", "Free"} <= _aliases(services, account.account_id)
            assert {"Unmapped", "Unmapped 2", "Free"} <= _listed(remote)
            assert "Free 2" not in _listed(remote)
            assert list(remote.subjects("Unmapped").values()) == ["Kept where it is"]
            assert remote.subjects('"Unmapped 2"') == {}
            ids = _ids(services, account)
            _organize(services, "move", [ids["Kept where it is"]], folder="unmapped")
            sync.run_once(account)
            assert list(remote.subjects('"Unmapped 2"').values()) == ["Kept where it is"]
            assert list(remote.subjects("Unmapped").values()) == ["Kept where it is"]


def test_a_creation_finding_every_numbered_name_taken_is_dead_lettered(
    tmp_path: Path, dovecot: DovecotServer
) -> None:
    user = _user(dovecot)
    for remote in _mailbox(user):
        for name in ["Taken", *(f'"Taken {n}"' for n in range(2, NUMBERED_NAMES + 1))]:
            assert remote.conn.create(name)[0] == "OK"
        account = imap_account_config(user, FOLDERS)
        with open_services(tmp_path, account) as services:
            sync = services.account_synchronizer()
            sync.run_once(account)
            outcome = _create(services, account.account_id, "Taken")
            sync.run_once(account)
            assert _record(services, outcome) == (
                "dead-lettered",
                int(MutationFailure.FOLDER_EXISTS),
            )
            assert "Taken" not in _aliases(services, account.account_id)
            # An operator's retry is carried under the same rule: the record never noted
            # one of those names, so none is its own folder.
            retry = services.mutations().retry(outcome.record.creation_id)
            assert retry is not None
            assert retry.outcome is Retried.NOW
            sync.run_once(account)
            assert _record(services, outcome) == (
                "dead-lettered",
                int(MutationFailure.FOLDER_EXISTS),
            )
            assert f"Taken {NUMBERED_NAMES + 1}" not in _listed(remote)


def test_a_run_cut_off_after_its_create_completes_the_record_next_time(
    tmp_path: Path, dovecot: DovecotServer
) -> None:
    user = _user(dovecot)
    for _remote in _mailbox(user):
        account = imap_account_config(user, FOLDERS)
        with open_services(tmp_path, account) as services:
            sync = services.account_synchronizer()
            sync.run_once(account)
            outcome = _create(services, account.account_id, "Halfway")

            class CutOff(ImapFolderWriter):
                def create(self, remote_name: str) -> None:
                    super().create(remote_name)
                    raise ConnectionError("cut off")

            session = services.connectors.open(account)
            assert isinstance(session, ImapSession)
            try:
                with pytest.raises(ConnectionError):
                    FolderCreationConvergence(SqlFolderCreations(services.engine)).converge(
                        account.account_id, CutOff(session)
                    )
            finally:
                session.close()
            assert _record(services, outcome)[0] == "converging"
            sync.run_once(account)
            assert _record(services, outcome) == ("completed", None)
            assert "Halfway" in _aliases(services, account.account_id)


def _config_file(root: Path, user: ImapAccount, database_url: str | None) -> Path:
    """The deployment over the Dovecot user as `mfctl` reads it, with `FOLDERS` mapped."""
    secret = f"MF_TEST_SECRET_{uuid.uuid4().hex[:8].upper()}"
    os.environ[secret] = user.password
    store = f'DatabaseUrl = "{database_url}"' if database_url else ""
    mapped = "".join(
        f'\n[[Accounts.Folders]]\nRemote = "{f.remote_name}"\nAlias = "{f.alias}"\n'
        + (f'Role = "{f.role.value}"\n' if f.role else "")
        for f in FOLDERS
    )
    path = root / "mailfathom.toml"
    path.write_text(
        f"""[Store]
DataDir = "{root / "data"}"
{store}

[[Accounts]]
Id = "imap"
Kind = "imap"

[Accounts.Imap]
Host = "{user.host}"
Port = {user.port}
Username = "{user.username}"
Tls = "none"
Secret = {{ Env = "{secret}" }}
{mapped}""",
        "utf-8",
    )
    return path


class _SpentWriter(ImapFolderWriter):
    """Every attempt fails; with `creates`, after its CREATE reached the server."""

    def __init__(self, session: ImapSession, creates: bool) -> None:
        super().__init__(session)
        self._creates = creates

    def create(self, remote_name: str) -> None:
        if self._creates:
            super().create(remote_name)
        raise SyncError("The connection was lost.")


@pytest.mark.parametrize("last_created", [False, True], ids=["never-created", "cut-off"])
def test_an_operator_retry_of_a_spent_creation_is_carried_out_by_the_next_run(
    tmp_path: Path, dovecot: DovecotServer, database_url: str | None, last_created: bool
) -> None:
    """Every attempt failed (code 4). After `mfctl mutations retry` the run creates the
    folder, or, when the last attempt's CREATE had reached the server, finds the name it
    noted and completes the record without a second CREATE."""
    user = _user(dovecot)
    for remote in _mailbox(user):
        config = _config_file(tmp_path, user, database_url)
        (account,) = load_config(config).accounts
        with Services.open(load_config(config)) as services:
            services.account_synchronizer().run_once(account)
            created = _create(services, account.account_id, "Receipts")
            convergence = FolderCreationConvergence(SqlFolderCreations(services.engine))
            session = services.connectors.open(account)
            assert isinstance(session, ImapSession)
            try:
                for attempt in range(1, MAX_ATTEMPTS + 1):
                    creates = last_created and attempt == MAX_ATTEMPTS
                    convergence.converge(account.account_id, _SpentWriter(session, creates))
            finally:
                session.close()
            assert _record(services, created) == (
                "dead-lettered",
                int(MutationFailure.ATTEMPTS_SPENT),
            )
        assert ("Receipts" in _listed(remote)) is last_created
        record_id = str(created.record.creation_id)
        retried = run_to_exit(tmp_path, "mutations", "retry", record_id, "--config", str(config))
        assert retried.returncode == 0, retried.stderr
        assert "state           pending" in retried.stdout
        assert "attempts        0" in retried.stdout
        with Services.open(load_config(config)) as services:
            services.account_synchronizer().run_once(account)
            assert _record(services, created) == ("completed", None)
            assert "Receipts" in _aliases(services, account.account_id)
        assert "Receipts" in _listed(remote, "LSUB")
        shown = run_to_exit(tmp_path, "mutations", "show", record_id, "--config", str(config))
        assert "state           completed" in shown.stdout
        # The noted name was found: completed with no attempt begun, no second CREATE.
        assert f"attempts        {0 if last_created else 1}" in shown.stdout


def test_a_continuous_run_watches_a_folder_it_created(
    tmp_path: Path, dovecot: DovecotServer
) -> None:
    """In push mode the new folder gets a watcher of its own: mail another client files
    there afterwards is stored without a restart."""
    user = _user(dovecot)
    for remote in _mailbox(user):
        _watch_created(tmp_path, user, remote)


def _watch_created(tmp_path: Path, user: ImapAccount, remote: Mailbox) -> None:
    account = imap_account_config(
        user, FOLDERS, sync_mode=SyncMode.PUSH, poll_interval_seconds=3600.0
    )
    with open_services(tmp_path, account) as services:
        sync = services.account_synchronizer()
        stop = threading.Event()
        worker = threading.Thread(target=sync.run_forever, args=(account, stop), daemon=True)
        worker.start()
        try:
            wait_for(
                lambda: services._reader().readable_folders([account.account_id]),
                "the first pass",
            )
            _create(services, account.account_id, "Fresh")
            wait_for(
                lambda: "Fresh" in _aliases(services, account.account_id),
                "the folder was created and published",
            )
            remote.append(sample("Arrived later"), "Fresh")
            wait_for(
                lambda: (
                    "Arrived later"
                    in {r.subject for r in stored_rows(services, account.account_id)}
                ),
                "mail filed in the new folder was stored",
            )
        finally:
            stop.set()
            worker.join(timeout=60)
        assert not worker.is_alive()
