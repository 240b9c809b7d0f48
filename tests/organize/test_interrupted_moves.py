"""A move interrupted between its COPY and its EXPUNGE, on a Dovecot without MOVE, is finished
by the next pass: the copy the first attempt made is found (by Message-ID, among the UIDs the
destination gave out since), no second copy is made, the original is taken out, and the email
keeps its identifier. The same holds when the interruption comes after the stored row was
re-pointed."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from mailfathom.adapters.imap.move_store import ImapMoveWriter
from mailfathom.adapters.imap.session import ImapSession
from mailfathom.adapters.sql.moves import SqlMoveLedger
from mailfathom.adapters.sql.sync_store import SqlSyncStore
from mailfathom.app.organize.moves import MoveConvergence
from mailfathom.domain.config import AccountConfig
from mailfathom.domain.errors import SyncError
from servers.dovecot import DovecotServer
from sync.helpers import imap_account_config, open_services, stored_rows

from .test_moves_dovecot import FOLDERS, _fill, _ids, _mailbox, _organize, _states, _user


class Interrupted(ImapMoveWriter):
    """Loses the connection right after the step named."""

    def __init__(self, session: ImapSession, after: str) -> None:
        super().__init__(session)
        self._after = after

    def transfer(self, source: str, uids: Sequence[int], destination: str) -> dict[int, int]:
        mapping = super().transfer(source, uids, destination)
        if self._after == "copy":
            raise SyncError("connection lost")
        return mapping

    def remove_originals(self, source: str, uids: Sequence[int]) -> None:
        if self._after == "repoint":
            raise SyncError("connection lost")
        super().remove_originals(source, uids)


@pytest.mark.parametrize("after", ["copy", "repoint"])
def test_an_interrupted_move_is_finished_without_a_second_copy(
    tmp_path: Path, dovecot_without_move: DovecotServer, after: str, database_url: str | None
) -> None:
    user = _user(dovecot_without_move)
    for remote in _mailbox(user):
        _fill(remote, "Interrupted one", "Interrupted two", "Bystander")
        account = imap_account_config(user, FOLDERS)
        with open_services(tmp_path, account, database_url) as services:
            sync = services.account_synchronizer()
            sync.run_once(account)
            ids = _ids(services, account)
            outcome = _organize(
                services, "archive", [ids["Interrupted one"], ids["Interrupted two"]]
            )
            session = services.connectors.open(account)
            assert isinstance(session, ImapSession)
            try:
                moves = MoveConvergence(
                    SqlMoveLedger(services.engine, SqlSyncStore(services.engine))
                )
                moves.converge(account.account_id, Interrupted(session, after))
            finally:
                session.close()
            assert {s for s, _ in _states(services, outcome)} == {"converging"}
            # The copies exist; the originals are still in the inbox.
            assert sorted(remote.subjects("Archive").values()) == [
                "Interrupted one",
                "Interrupted two",
            ]
            assert len(remote.subjects("INBOX")) == 3
            sync.run_once(account)
            sync.run_once(account)
            assert _states(services, outcome) == [("completed", None)] * 2
            assert sorted(remote.subjects("Archive").values()) == [
                "Interrupted one",
                "Interrupted two",
            ]
            assert list(remote.subjects("INBOX").values()) == ["Bystander"]
            rows = stored_rows(services, account.account_id)
            assert {r.subject: str(r.stored_email_id) for r in rows} == ids


class RacedByPasses(ImapMoveWriter):
    """Right after the MOVE, before the row is re-pointed, passes of the source and of the
    destination run over sessions of their own, as a continuous run's folder watchers may."""

    def __init__(self, session: ImapSession, passes: Callable[[], None]) -> None:
        super().__init__(session)
        self._passes = passes

    def transfer(self, source: str, uids: Sequence[int], destination: str) -> dict[int, int]:
        mapping = super().transfer(source, uids, destination)
        self._passes()
        return mapping


def test_passes_racing_a_move_neither_lose_the_identifier_nor_duplicate_it(
    tmp_path: Path, dovecot: DovecotServer
) -> None:
    user = _user(dovecot)
    for remote in _mailbox(user):
        _fill(remote, "Raced", "Bystander")
        account = imap_account_config(user, FOLDERS)
        with open_services(tmp_path, account) as services:
            sync = services.account_synchronizer()
            sync.run_once(account)
            ids = _ids(services, account)
            outcome = _organize(services, "archive", [ids["Raced"]])
            folders = {f.alias: f.folder_id for f in services.store.ensure_folders(
                account.account_id, account.folders)}  # fmt: skip

            def passes(account: AccountConfig = account, folders: dict[str, int] = folders) -> None:
                other = services.connectors.open(account)
                try:
                    for alias in ("INBOX", "Archive"):
                        synchronizer = services.folder_synchronizer(account)
                        synchronizer.run(other, services.store.folder(folders[alias]))
                finally:
                    other.close()
                # The destination's pass stored the copy as a new email meanwhile.
                assert len(stored_rows(services, account.account_id)) == 3

            session = services.connectors.open(account)
            assert isinstance(session, ImapSession)
            try:
                ledger = SqlMoveLedger(services.engine, SqlSyncStore(services.engine))
                MoveConvergence(ledger).converge(account.account_id, RacedByPasses(session, passes))
            finally:
                session.close()
            assert _states(services, outcome) == [("completed", None)]
            sync.run_once(account)
            rows = stored_rows(services, account.account_id)
            assert {r.subject: str(r.stored_email_id) for r in rows} == ids
            assert len(rows) == 2
            assert {r.folder_id for r in rows if r.subject == "Raced"} == {folders["Archive"]}
